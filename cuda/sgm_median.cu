// The last SGM step, a 3x3 median of the valid disparities around each valid one, and the
// disparity-to-depth conversion.
#include "cuda/sgm.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::stereo {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void median(ImageView<const uint16_t> in, ImageView<uint16_t> out) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  uint16_t centre = in.row(y)[x];
  if (centre == kInvalidDisparity) {
    out.row(y)[x] = centre;
    return;
  }
  uint16_t v[9];
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      int sx = x + dx, sy = y + dy;
      if (sx < 0 || sy < 0 || sx >= in.width || sy >= in.height) continue;
      uint16_t d = in.row(sy)[sx];
      if (d == kInvalidDisparity) continue;
      int i = n++;
      for (; i > 0 && v[i - 1] > d; --i) v[i] = v[i - 1];  // insertion sort
      v[i] = d;
    }
  out.row(y)[x] = v[(n - 1) / 2];
}

__global__ void toDepth(ImageView<const uint16_t> disparity, ImageView<float> depth, DepthModel m) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= disparity.width || y >= disparity.height) return;
  uint16_t d = disparity.row(y)[x];
  float w = __fmaf_rn(m.q32, static_cast<float>(d) / (1 << kSubpixelBits), m.q33);
  depth.row(y)[x] = d != kInvalidDisparity && w > 0.f ? __fdiv_rn(m.q23, w) : INFINITY;
}

dim3 gridFor(int width, int height) { return dim3((width + kBlockX - 1) / kBlockX, (height + kBlockY - 1) / kBlockY); }

}  // namespace

void launchDisparityMedian(ImageView<const uint16_t> in, ImageView<uint16_t> out, cudaStream_t stream) {
  median<<<gridFor(in.width, in.height), dim3(kBlockX, kBlockY), 0, stream>>>(in, out);
  PP_CUDA_CHECK_LAUNCH();
}

void launchDisparityToDepth(ImageView<const uint16_t> disparity, ImageView<float> depth, DepthModel m, cudaStream_t stream) {
  toDepth<<<gridFor(disparity.width, disparity.height), dim3(kBlockX, kBlockY), 0, stream>>>(disparity, depth, m);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::stereo
