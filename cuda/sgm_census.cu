// Census: 9x7 centre-symmetric, borders replicated. Each block stages its tile and halo in shared
// memory; one thread per pixel.
#include "cuda/sgm.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::stereo {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;
constexpr int kHaloX = kCensusWidth / 2, kHaloY = kCensusHeight / 2;
constexpr int kTileW = kBlockX + 2 * kHaloX, kTileH = kBlockY + 2 * kHaloY;

__global__ void census(ImageView<const uint8_t> image, uint32_t* codes) {
  __shared__ uint8_t tile[kTileH][kTileW];
  int x0 = blockIdx.x * kBlockX - kHaloX, y0 = blockIdx.y * kBlockY - kHaloY;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < kTileW * kTileH; i += kBlockX * kBlockY) {
    int tx = i % kTileW, ty = i / kTileW;
    int sx = min(max(x0 + tx, 0), image.width - 1), sy = min(max(y0 + ty, 0), image.height - 1);
    tile[ty][tx] = image.row(sy)[sx];
  }
  __syncthreads();
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= image.width || y >= image.height) return;
  int cx = threadIdx.x + kHaloX, cy = threadIdx.y + kHaloY;
  uint32_t bits = 0;
#pragma unroll
  for (int i = 0; i < (kCensusWidth * kCensusHeight) / 2; ++i) {  // raster order up to the centre
    int dx = i % kCensusWidth - kHaloX, dy = i / kCensusWidth - kHaloY;
    bits = (bits << 1) | (tile[cy + dy][cx + dx] > tile[cy - dy][cx - dx] ? 1u : 0u);
  }
  codes[static_cast<size_t>(y) * image.width + x] = bits;
}

}  // namespace

void launchCensus(ImageView<const uint8_t> image, uint32_t* codes, cudaStream_t stream) {
  dim3 block(kBlockX, kBlockY), grid((image.width + kBlockX - 1) / kBlockX, (image.height + kBlockY - 1) / kBlockY);
  census<<<grid, block, 0, stream>>>(image, codes);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::stereo
