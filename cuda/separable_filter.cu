#include <stdexcept>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#include "cuda/separable_filter.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::filter {

namespace {

__constant__ float cTaps[kConstantSlots][kMaxConstantTaps];

constexpr int kBlockX = 32, kBlockY = 8;
constexpr int kRowPixels = 4;     // outputs per thread in the row pass (along x)
constexpr int kColumnPixels = 4;  // outputs per thread in the column pass (along y)
constexpr int kMaxRadius = 64;    // halo capacity of the shared tiles; longer filters use global taps too

__device__ __forceinline__ float tap(const DeviceTaps& t, int i) {
  return t.slot >= 0 ? cTaps[t.slot][i] : t.global[i];
}

template <class T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ uint8_t fromFloat<uint8_t>(float v) {
  return static_cast<uint8_t>(fminf(fmaxf(v + 0.5f, 0.f), 255.f));
}
template <> __device__ __forceinline__ uint16_t fromFloat<uint16_t>(float v) {
  return static_cast<uint16_t>(fminf(fmaxf(v + 0.5f, 0.f), 65535.f));
}

// Row pass: each block stages kBlockY rows of (kBlockX * kRowPixels + 2 * radius) pixels, border
// replicated, as float in dynamic shared memory; each thread then produces kRowPixels outputs.
template <class T, int C> __global__ void rowPass(ImageView<const T> src, ImageView<float> dst, DeviceTaps taps) {
  extern __shared__ float tile[];
  constexpr int channels = C;
  int radius = taps.count / 2;
  int tileW = kBlockX * kRowPixels + 2 * radius;
  int x0 = blockIdx.x * kBlockX * kRowPixels, y = blockIdx.y * kBlockY + threadIdx.y;
  float* row = tile + threadIdx.y * tileW * channels;
  if (y < src.height) {
    const T* in = src.row(y);
    for (int i = threadIdx.x; i < tileW * channels; i += kBlockX) {
      int x = min(max(x0 - radius + i / channels, 0), src.width - 1);
      row[i] = static_cast<float>(in[x * channels + i % channels]);
    }
  }
  __syncthreads();
  if (y >= src.height) return;
  for (int p = 0; p < kRowPixels; ++p) {
    int lx = threadIdx.x + p * kBlockX, x = x0 + lx;  // strided so that a warp's outputs are contiguous
    if (x >= src.width) break;
    float sum[C] = {};
    for (int k = 0; k < taps.count; ++k) {
      float w = tap(taps, k);
#pragma unroll
      for (int c = 0; c < C; ++c) sum[c] += w * row[(lx + k) * C + c];
    }
#pragma unroll
    for (int c = 0; c < C; ++c) dst.at(x, y, c) = sum[c];
  }
}

// Column pass: each block stages (kBlockY * kColumnPixels + 2 * radius) rows of kBlockX pixels;
// each thread produces kColumnPixels consecutive outputs down a column, reading each staged row
// once for all of them (each output still sums its taps in order).
template <class T, int C> __global__ void columnPass(ImageView<const float> src, ImageView<T> dst, DeviceTaps taps) {
  extern __shared__ float tile[];
  int radius = taps.count / 2;
  int tileH = kBlockY * kColumnPixels + 2 * radius;
  int x = blockIdx.x * kBlockX + threadIdx.x, y0 = blockIdx.y * kBlockY * kColumnPixels;
  if (x < src.width)
    for (int i = threadIdx.y; i < tileH; i += kBlockY) {
      int y = min(max(y0 - radius + i, 0), src.height - 1);
#pragma unroll
      for (int c = 0; c < C; ++c) tile[(i * kBlockX + threadIdx.x) * C + c] = src.at(x, y, c);
    }
  __syncthreads();
  if (x >= src.width) return;
  int ly0 = threadIdx.y * kColumnPixels;
  float sum[kColumnPixels][C] = {};
  for (int i = 0; i < taps.count + kColumnPixels - 1; ++i) {  // staged row ly0 + i is tap i - p of output p
    float v[C];
#pragma unroll
    for (int c = 0; c < C; ++c) v[c] = tile[((ly0 + i) * kBlockX + threadIdx.x) * C + c];
#pragma unroll
    for (int p = 0; p < kColumnPixels; ++p) {
      int k = i - p;
      if (k < 0 || k >= taps.count) continue;
      float w = tap(taps, k);
#pragma unroll
      for (int c = 0; c < C; ++c) sum[p][c] += w * v[c];
    }
  }
#pragma unroll
  for (int p = 0; p < kColumnPixels; ++p) {
    int y = y0 + ly0 + p;
    if (y >= src.height) break;
#pragma unroll
    for (int c = 0; c < C; ++c) dst.at(x, y, c) = fromFloat<T>(sum[p][c]);
  }
}

void checkTaps(const DeviceTaps& taps, int channels) {  // before any launch: clear errors, not launch failures
  if (taps.count < 1 || taps.count % 2 == 0 || taps.count / 2 > kMaxRadius)
    throw std::invalid_argument("separable filter: taps must be an odd count up to " +
                                std::to_string(2 * kMaxRadius + 1) + ", got " + std::to_string(taps.count));
  if (taps.slot < 0 && !taps.global)
    throw std::invalid_argument("separable filter: taps are in neither a constant slot nor global memory");
  if (channels != 1 && channels != 3 && channels != 4)
    throw std::invalid_argument("separable filter: 1, 3 or 4 channels");
}

template <class Kernel, class... Args>
void launchWithShared(Kernel kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t stream, Args... args) {
  allowSharedMemory(kernel, shared, "separable filter: a tile of this many taps");  // long filters on 3 or 4 channels
  kernel<<<grid, block, shared, stream>>>(args...);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void uploadConstantTaps(int slot, const float* taps, int count) {
  if (slot < 0 || slot >= kConstantSlots || count > kMaxConstantTaps)
    throw std::invalid_argument("separable filter: no constant slot " + std::to_string(slot) + " for " +
                                std::to_string(count) + " taps");
  PP_CUDA_CHECK(cudaMemcpyToSymbol(cTaps, taps, sizeof(float) * count, sizeof(float) * kMaxConstantTaps * slot));
  finishSynchronousCopies();
}

template <class T>
void launchRowPass(ImageView<const T> src, ImageView<float> dst, DeviceTaps taps, cudaStream_t stream) {
  checkTaps(taps, src.channels);
  int radius = taps.count / 2;
  size_t shared = sizeof(float) * kBlockY * (kBlockX * kRowPixels + 2 * radius) * src.channels;
  dim3 block(kBlockX, kBlockY),
      grid((src.width + kBlockX * kRowPixels - 1) / (kBlockX * kRowPixels), (src.height + kBlockY - 1) / kBlockY);
  switch (src.channels) {
    case 1: launchWithShared(rowPass<T, 1>, grid, block, shared, stream, src, dst, taps); break;
    case 3: launchWithShared(rowPass<T, 3>, grid, block, shared, stream, src, dst, taps); break;
    default: launchWithShared(rowPass<T, 4>, grid, block, shared, stream, src, dst, taps); break;
  }
}

template <class T>
void launchColumnPass(ImageView<const float> src, ImageView<T> dst, DeviceTaps taps, cudaStream_t stream) {
  checkTaps(taps, src.channels);
  int radius = taps.count / 2;
  size_t shared = sizeof(float) * kBlockX * (kBlockY * kColumnPixels + 2 * radius) * src.channels;
  dim3 block(kBlockX, kBlockY),
      grid((src.width + kBlockX - 1) / kBlockX, (src.height + kBlockY * kColumnPixels - 1) / (kBlockY * kColumnPixels));
  switch (src.channels) {
    case 1: launchWithShared(columnPass<T, 1>, grid, block, shared, stream, src, dst, taps); break;
    case 3: launchWithShared(columnPass<T, 3>, grid, block, shared, stream, src, dst, taps); break;
    default: launchWithShared(columnPass<T, 4>, grid, block, shared, stream, src, dst, taps); break;
  }
}

template void launchRowPass<uint8_t>(ImageView<const uint8_t>, ImageView<float>, DeviceTaps, cudaStream_t);
template void launchRowPass<uint16_t>(ImageView<const uint16_t>, ImageView<float>, DeviceTaps, cudaStream_t);
template void launchRowPass<float>(ImageView<const float>, ImageView<float>, DeviceTaps, cudaStream_t);
template void launchColumnPass<uint8_t>(ImageView<const float>, ImageView<uint8_t>, DeviceTaps, cudaStream_t);
template void launchColumnPass<uint16_t>(ImageView<const float>, ImageView<uint16_t>, DeviceTaps, cudaStream_t);
template void launchColumnPass<float>(ImageView<const float>, ImageView<float>, DeviceTaps, cudaStream_t);

}  // namespace pp::filter
