// The detection pyramid: every level resized from the picture in one launch (OpenCV's bit-exact
// bilinear resize, its area path for an exact halving, a copy at scale 1), then the integral and
// squared integral images of every level: a warp scans each row, then each column is summed in
// runs that a block of threads adds up.
#include "cuda/haar.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::faces {

namespace {

constexpr int kWarps = 4;

__device__ __forceinline__ uint32_t horizontal(const PyramidArgs& a, const LevelGeometry& g, int x, int sy) {
  const uint8_t* row = a.source + static_cast<size_t>(sy) * a.sourcePitch;
  if (x < g.beforeX) return static_cast<uint32_t>(row[0]) << 8;
  if (x >= g.afterX) return static_cast<uint32_t>(row[a.sourceWidth - 1]) << 8;
  int2 t = a.tables[g.tableX + x];
  return row[t.x] * static_cast<uint32_t>(256 - t.y) + row[t.x + 1] * static_cast<uint32_t>(t.y);
}

__global__ void resizeLevels(PyramidArgs a) {
  int bx, by;
  const LevelGeometry g = levelOfTile(a, blockIdx.x, false, bx, by);
  int x = bx * kTileX + threadIdx.x, y = by * kTileY + threadIdx.y;
  if (x >= g.width || y >= g.height) return;
  uint8_t value;
  if (g.mode == 0) {
    value = a.source[static_cast<size_t>(y) * a.sourcePitch + x];
  } else if (g.mode == 2) {
    const uint8_t* r0 = a.source + static_cast<size_t>(2 * y) * a.sourcePitch + 2 * x;
    value = static_cast<uint8_t>((r0[0] + r0[1] + r0[a.sourcePitch] + r0[a.sourcePitch + 1] + 2) >> 2);
  } else if (y < g.beforeY || y >= g.afterY) {
    value = static_cast<uint8_t>((horizontal(a, g, x, y < g.beforeY ? 0 : a.sourceHeight - 1) + 128) >> 8);
  } else {
    int2 t = a.tables[g.tableY + y];
    uint32_t top = horizontal(a, g, x, t.x), bottom = horizontal(a, g, x, t.x + 1);
    value = static_cast<uint8_t>((top * static_cast<uint32_t>(256 - t.y) + bottom * static_cast<uint32_t>(t.y) + (1u << 15)) >> 16);
  }
  a.pixels[g.imageOffset + static_cast<size_t>(y) * g.width + x] = value;
}

// Row r of the integrals (r >= 1) holds the prefix sums of image row r - 1; row 0 and column 0 are 0.
__global__ void integralRows(PyramidArgs a) {
  const LevelGeometry g = a.geometry[blockIdx.y];
  int r = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32, pitch = g.width + 1;
  if (r > g.height) return;  // whole warps
  int32_t* sums = a.sums + g.integralOffset + static_cast<size_t>(r) * pitch;
  uint32_t* squares = a.squares + g.integralOffset + static_cast<size_t>(r) * pitch;
  if (lane == 0) sums[0] = 0, squares[0] = 0;
  const uint8_t* row = r > 0 ? a.pixels + g.imageOffset + static_cast<size_t>(r - 1) * g.width : nullptr;
  int32_t carry = 0;
  uint32_t carrySq = 0;
  for (int base = 0; base < g.width; base += 32) {
    int x = base + lane;
    uint32_t v = r > 0 && x < g.width ? row[x] : 0;
    int32_t s = static_cast<int32_t>(v);
    uint32_t q = v * v;
    for (int offset = 1; offset < 32; offset *= 2) {
      int32_t os = __shfl_up_sync(0xFFFFFFFFu, s, offset);
      uint32_t oq = __shfl_up_sync(0xFFFFFFFFu, q, offset);
      if (lane >= offset) s += os, q += oq;
    }
    if (x < g.width) sums[x + 1] = s + carry, squares[x + 1] = q + carrySq;
    carry += __shfl_sync(0xFFFFFFFFu, s, 31);
    carrySq += __shfl_sync(0xFFFFFFFFu, q, 31);
  }
}

// Column running sums, a block per 32 columns of a level: each column's rows split into kChunks
// runs summed in parallel, then each run rewritten with the sum of the runs above it (integer sums,
// so the order does not change them; the squares wrap as the CPU's do).
constexpr int kChunks = 16;

__global__ void integralColumns(PyramidArgs a) {
  __shared__ int32_t chunkSums[kChunks][32];
  __shared__ uint32_t chunkSquares[kChunks][32];
  const LevelGeometry g = a.geometry[blockIdx.y];
  int c = blockIdx.x * 32 + threadIdx.x, pitch = g.width + 1, rows = (g.height + kChunks - 1) / kChunks;
  if (blockIdx.x * 32 > g.width) return;  // the whole block: past this level's columns
  int first = 1 + threadIdx.y * rows, last = min(first + rows, g.height + 1);  // rows [first, last) of the integral
  bool column = c <= g.width;
  int32_t* sums = a.sums + g.integralOffset + c;
  uint32_t* squares = a.squares + g.integralOffset + c;
  int32_t s = 0;
  uint32_t q = 0;
#pragma unroll 8
  for (int r = first; column && r < last; ++r) s += sums[static_cast<size_t>(r) * pitch], q += squares[static_cast<size_t>(r) * pitch];
  chunkSums[threadIdx.y][threadIdx.x] = s, chunkSquares[threadIdx.y][threadIdx.x] = q;
  __syncthreads();
  s = 0, q = 0;
  for (int k = 0; k < threadIdx.y; ++k) s += chunkSums[k][threadIdx.x], q += chunkSquares[k][threadIdx.x];
#pragma unroll 8
  for (int r = first; column && r < last; ++r) {
    size_t i = static_cast<size_t>(r) * pitch;
    s += sums[i], q += squares[i];
    sums[i] = s, squares[i] = q;
  }
}

}  // namespace

void launchPyramid(const PyramidArgs& a, cudaStream_t stream) {
  if (a.pixelTiles == 0) return;  // no levels
  resizeLevels<<<a.pixelTiles, dim3(kTileX, kTileY), 0, stream>>>(a);
  PP_CUDA_CHECK_LAUNCH();
  integralRows<<<dim3((a.largestHeight + 1 + kWarps - 1) / kWarps, a.levels), kWarps * 32, 0, stream>>>(a);
  PP_CUDA_CHECK_LAUNCH();
  integralColumns<<<dim3((a.largestWidth + 1 + 31) / 32, a.levels), dim3(32, kChunks), 0, stream>>>(a);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
