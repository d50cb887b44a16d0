#include "cuda/cuda_check.hpp"
#include "cuda/luma.cuh"

namespace pp {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void luma(ImageView<const uint8_t> rgb, ImageView<uint8_t> grey) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= grey.width || y >= grey.height) return;
  grey.at(x, y) = static_cast<uint8_t>(lumaOf(rgb.at(x, y, 0), rgb.at(x, y, 1), rgb.at(x, y, 2)));
}

}  // namespace

void launchLuma(ImageView<const uint8_t> rgb, ImageView<uint8_t> grey, cudaStream_t stream) {
  dim3 block(kBlockX, kBlockY), grid((grey.width + kBlockX - 1) / kBlockX, (grey.height + kBlockY - 1) / kBlockY);
  luma<<<grid, block, 0, stream>>>(rgb, grey);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp
