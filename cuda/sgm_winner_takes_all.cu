// Winner takes all: a warp per row reads each pixel's sums (lane l holds disparities l*K..l*K+K-1)
// a round of pixels at a time. The right image's best match at each column collects in shared
// memory as the row goes by; the left-right check and the fill run when the row is done.
#include "cuda/sgm_path.cuh"  // warp reductions, sum loads
#include "cuda/shared_memory.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::stereo {

namespace {

constexpr unsigned kNoMatch = 0xFFFFFFFFu;

__device__ __forceinline__ uint8_t confidenceOf(int best, int second) {
  return second == 0 ? 0 : static_cast<uint8_t>((255 * (second - best) + second / 2) / second);
}

// Rule 6 for one row, by a warp in chunks of 32 columns: the nearest valid disparity at or left of
// each column (kept in `scratch`), then at or right of it, and the smaller for invalid columns.
__device__ void fillRow(uint16_t* row, uint16_t* scratch, int width, int lane) {
  unsigned carry = kInvalidDisparity;
  for (int base = 0; base < width; base += 32) {
    int x = base + lane;
    unsigned v = x < width ? row[x] : kInvalidDisparity;
    unsigned atOrBelow = __ballot_sync(kFullWarp, v != kInvalidDisparity) & (0xFFFFFFFFu >> (31 - lane));
    unsigned nearest = __shfl_sync(kFullWarp, v, atOrBelow ? 31 - __clz(atOrBelow) : 0);
    if (!atOrBelow) nearest = carry;
    if (x < width) scratch[x] = static_cast<uint16_t>(nearest);
    carry = __shfl_sync(kFullWarp, nearest, 31);
  }
  carry = kInvalidDisparity;
  for (int base = (width - 1) / 32 * 32; base >= 0; base -= 32) {
    int x = base + lane;
    unsigned v = x < width ? row[x] : kInvalidDisparity;
    unsigned atOrAbove = __ballot_sync(kFullWarp, v != kInvalidDisparity) & (0xFFFFFFFFu << lane);
    unsigned nearest = __shfl_sync(kFullWarp, v, atOrAbove ? __ffs(atOrAbove) - 1 : 0);
    if (!atOrAbove) nearest = carry;
    if (x < width && v == kInvalidDisparity) row[x] = static_cast<uint16_t>(min(nearest, static_cast<unsigned>(scratch[x])));
    carry = __shfl_sync(kFullWarp, nearest, 0);
  }
}

// Shared memory per warp: the right image's best (sum << 8 | d) per column, then the left's integer
// disparity per column.
__host__ __device__ inline size_t sharedBytesPerWarp(int width) { return static_cast<size_t>(width) * (sizeof(uint32_t) + sizeof(uint16_t)); }

template <int D>
__global__ void winnerTakesAll(SgmParams p, SgmBuffers b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, int warpsPerBlock) {
  constexpr int K = D / 32;
  extern __shared__ uint32_t shared[];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, y = blockIdx.x * warpsPerBlock + warp, width = b.width;
  if (y >= b.height) return;  // whole warps
  uint32_t* rightBest = shared + static_cast<size_t>(warp) * width;
  uint16_t* leftBest = reinterpret_cast<uint16_t*>(shared + static_cast<size_t>(warpsPerBlock) * width) + static_cast<size_t>(warp) * width;
  for (int x = lane; x < width; x += 32) rightBest[x] = kNoMatch;
  __syncwarp();

  uint16_t* out = disparity.row(y);
  uint8_t* conf = confidence.data ? confidence.row(y) : nullptr;
  constexpr int kRound = kStepsPerRound<K>;
  for (int x0 = 0; x0 < width; x0 += kRound) {
    int sums[kRound][K];
#pragma unroll
    for (int c = 0; c < kRound; ++c)
      if (x0 + c < width) loadSums<K>(b.volume + (static_cast<size_t>(y) * width + x0 + c) * D + lane * K, sums[c]);
#pragma unroll
    for (int c = 0; c < kRound; ++c) {
      int x = x0 + c;
      if (x >= width) break;
      int (&sum)[K] = sums[c];
      unsigned local = kNoMatch;
#pragma unroll
      for (int j = 0; j < K; ++j) {
        unsigned candidate = static_cast<unsigned>(sum[j]) << 8 | static_cast<unsigned>(lane * K + j);
        local = min(local, candidate);
        int xr = x - lane * K - j - p.minDisparity;
        if (xr >= 0) rightBest[xr] = min(rightBest[xr], candidate);
      }
      unsigned best = warpMin(local);
      int bestSum = static_cast<int>(best >> 8), bestD = static_cast<int>(best & 0xFF), second = kFarCost << 4;
      unsigned neighbours = 0;  // sums at bestD - 1 (low half) and bestD + 1 (high half)
#pragma unroll
      for (int j = 0; j < K; ++j) {
        int d = lane * K + j;
        if (abs(d - bestD) > 1) second = min(second, sum[j]);
        if (d == bestD - 1) neighbours |= static_cast<unsigned>(sum[j]);
        if (d == bestD + 1) neighbours |= static_cast<unsigned>(sum[j]) << 16;
      }
      second = warpMin(second);
      neighbours = warpOr(neighbours);
      if (lane == 0) {
        bool unique = p.uniqueness <= 0 || second * (100 - p.uniqueness) >= bestSum * 100;
        int offset = p.subpixel && bestD > 0 && bestD < D - 1 ? subpixelOffset(static_cast<int>(neighbours & 0xFFFF), bestSum, static_cast<int>(neighbours >> 16)) : 0;
        out[x] = unique ? static_cast<uint16_t>(((bestD + p.minDisparity) << kSubpixelBits) + offset) : kInvalidDisparity;
        leftBest[x] = unique ? static_cast<uint16_t>(bestD) : kInvalidDisparity;
        if (conf) conf[x] = unique ? confidenceOf(bestSum, second) : 0;
      }
      __syncwarp();
    }
  }
  for (int x = lane; x < width && p.lrMaxDiff >= 0; x += 32) {
    int d = leftBest[x];
    if (d == kInvalidDisparity) continue;
    int xr = x - d - p.minDisparity;
    bool consistent = xr >= 0 && rightBest[xr] != kNoMatch && abs(static_cast<int>(rightBest[xr] & 0xFF) - d) <= p.lrMaxDiff;
    if (!consistent) {
      out[x] = kInvalidDisparity;
      if (conf) conf[x] = 0;
    }
  }
  if (p.fill) {
    __syncwarp();
    fillRow(out, leftBest, width, lane);
  }
}

template <int D>
void launch(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, cudaStream_t stream) {
  size_t perWarp = sharedBytesPerWarp(b.width);
  int warpsPerBlock = static_cast<int>(std::max<size_t>(1, std::min<size_t>(4, 48 * 1024 / perWarp)));
  size_t bytes = perWarp * warpsPerBlock;
  allowSharedMemory(winnerTakesAll<D>, bytes, "SGM winner-takes-all (one image row)");
  winnerTakesAll<D><<<(b.height + warpsPerBlock - 1) / warpsPerBlock, warpsPerBlock * 32, bytes, stream>>>(p, b, disparity, confidence, warpsPerBlock);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchWinnerTakesAll(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, cudaStream_t stream) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, disparity, confidence, stream);
    case 128: return launch<128>(p, b, disparity, confidence, stream);
    case 256: return launch<256>(p, b, disparity, confidence, stream);
    default: throw std::invalid_argument("SGM: disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
