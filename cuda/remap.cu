#include "cuda/cuda_check.hpp"
#include "cuda/remap.cuh"
#include "cuda/remap_math.hpp"

namespace pp::stereo {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

template <int C>
__global__ void remap(ImageView<const uint8_t> src, ImageView<const float> map, ImageView<uint8_t> dst) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= dst.width || y >= dst.height) return;
  RemapTap t = remapTap(map.at(x, y, 0), map.at(x, y, 1));
#pragma unroll
  for (int c = 0; c < C; ++c) dst.at(x, y, c) = bilinear(src, t, c);
}

}  // namespace

void launchRemap(ImageView<const uint8_t> src, ImageView<const float> map, ImageView<uint8_t> dst,
                 cudaStream_t stream) {
  dim3 block(kBlockX, kBlockY), grid((dst.width + kBlockX - 1) / kBlockX, (dst.height + kBlockY - 1) / kBlockY);
  if (src.channels == 3)
    remap<3><<<grid, block, 0, stream>>>(src, map, dst);
  else
    remap<1><<<grid, block, 0, stream>>>(src, map, dst);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::stereo
