// Census: 9x7 centre-symmetric, borders replicated. Each block stages its tile and halo in shared
// memory; a thread takes four pixels of a row and compares their four pairs at once, a byte each,
// from 32-bit reads of the tile (a pixel a thread spent its time on two byte reads a comparison).
// Both images of a pair in one launch.
#include "cuda/cuda_check.hpp"
#include "cuda/sgm.cuh"

namespace pp::stereo {

namespace {

constexpr int kBlockX = 32, kBlockY = 8, kPixelsPerThread = 4;
constexpr int kHaloX = kCensusWidth / 2, kHaloY = kCensusHeight / 2;
constexpr int kTileW = kBlockX * kPixelsPerThread + 2 * kHaloX, kTileH = kBlockY + 2 * kHaloY;
constexpr int kComparisons = kCensusWidth * kCensusHeight / 2;  // 31: raster order up to the centre
static_assert(kHaloX == kPixelsPerThread && kTileW % 4 == 0 && kComparisons <= 32,
              "a thread's window is three words a row");

// Bytes o..o+3 of a row's three words (o known at compile time).
__device__ __forceinline__ uint32_t bytesAt(const uint32_t (&w)[3], int o) {
  return o % 4 ? __funnelshift_r(w[o / 4], w[o / 4 + 1], o % 4 * 8) : w[o / 4];
}

// blockIdx.z: 0 the left image, 1 the right.
__global__ void __launch_bounds__(kBlockX* kBlockY)
    census(ImageView<const uint8_t> left, ImageView<const uint8_t> right, uint32_t* leftCodes, uint32_t* rightCodes) {
  const ImageView<const uint8_t> image = blockIdx.z ? right : left;
  uint32_t* codes = blockIdx.z ? rightCodes : leftCodes;
  __shared__ uint32_t tile[kTileH][kTileW / 4];
  uint8_t* bytes = reinterpret_cast<uint8_t*>(tile);
  const int x0 = blockIdx.x * kBlockX * kPixelsPerThread - kHaloX, y0 = blockIdx.y * kBlockY - kHaloY;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < kTileW * kTileH; i += kBlockX * kBlockY) {
    const int tx = i % kTileW, ty = i / kTileW;
    const int sx = min(max(x0 + tx, 0), image.width - 1), sy = min(max(y0 + ty, 0), image.height - 1);
    bytes[i] = image.row(sy)[sx];
  }
  __syncthreads();
  const int x = (blockIdx.x * kBlockX + threadIdx.x) * kPixelsPerThread, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= image.width || y >= image.height) return;
  // The thread's window: columns x - 4 .. x + 7 of rows y - 3 .. y + 3, three words a row.
  uint32_t window[kCensusHeight][3];
#pragma unroll
  for (int r = 0; r < kCensusHeight; ++r)
#pragma unroll
    for (int k = 0; k < 3; ++k) window[r][k] = tile[threadIdx.y + r][threadIdx.x + k];
  // Comparison i of the four pixels sets bit 0 of their four bytes; each group of eight is shifted
  // up as the next come, so byte p of group g ends up holding bits 30 - 8g .. 23 - 8g of pixel p.
  uint32_t groups[4] = {};
#pragma unroll
  for (int i = 0; i < kComparisons; ++i) {
    const int dx = i % kCensusWidth - kHaloX, dy = i / kCensusWidth - kHaloY;
    const uint32_t greater =
        __vcmpgtu4(bytesAt(window[kHaloY + dy], kHaloX + dx), bytesAt(window[kHaloY - dy], kHaloX - dx));
    groups[i / 8] = groups[i / 8] << 1 | (greater & 0x01010101u);
  }
  uint32_t* out = codes + static_cast<size_t>(y) * image.width + x;
#pragma unroll
  for (int p = 0; p < kPixelsPerThread; ++p) {
    if (x + p >= image.width) break;
    // Pixel p's bytes of the four groups, group 0 in the top byte; group 3 holds 7 bits.
    const uint32_t gathered = __byte_perm(__byte_perm(groups[3], groups[2], p | (p + 4) << 4),
                                          __byte_perm(groups[1], groups[0], p | (p + 4) << 4), 0x5410);
    out[p] = (gathered & 0xFFFFFF00u) >> 1 | (gathered & 0x7Fu);
  }
}

}  // namespace

void launchCensus(ImageView<const uint8_t> left, ImageView<const uint8_t> right, uint32_t* leftCodes,
                  uint32_t* rightCodes, cudaStream_t stream) {
  if (left.width != right.width || left.height != right.height)
    throw std::invalid_argument("SGM census: the images of a pair must be one size");
  constexpr int kPixelsX = kBlockX * kPixelsPerThread;
  dim3 block(kBlockX, kBlockY), grid((left.width + kPixelsX - 1) / kPixelsX, (left.height + kBlockY - 1) / kBlockY, 2);
  census<<<grid, block, 0, stream>>>(left, right, leftCodes, rightCodes);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::stereo
