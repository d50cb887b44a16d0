// Winner takes all: a block per row, its warps on consecutive stretches of the row, read each
// pixel's sums (lane l holds disparities l*K..l*K+K-1) a round of pixels at a time. The right
// image's best match at each column collects in shared memory as the row goes by; the left-right
// check and the fill run when the whole row is done. Unless the volume holds the matching costs,
// the sums read are left zero.
#include "cuda/sgm_path.cuh"  // warp reductions, sum loads and clears
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

constexpr int kWarpsPerRow = 8;

// Sums of a round's pixels past the warp's stretch: above any real sum (8 x 255), so their
// candidates are never taken as the right image's match.
constexpr unsigned kPastSum = 0xFFFF;
__device__ __forceinline__ bool isMatch(unsigned best) { return best < kPastSum << 8; }

// The right image's best per column xr sits at rightSlot(xr): a word is skipped every 32, so that a
// warp's atomics (lane l at xr - K l) fall in distinct banks. kLeftSlots before column 0 take the
// matches left of the image, and those past the width a round's pixels past the row's end.
__host__ __device__ constexpr int rightSlot(int xr) { return xr + (xr >> 5); }
constexpr int kMaxDisparitiesPerLane = 8, kMaxRound = 8;  // K and kStepsPerRound<K> at most
constexpr int kLeftSlots = 16;
static_assert(-rightSlot(-kMaxDisparitiesPerLane) <= kLeftSlots, "a lane's matches left of the image");
__host__ __device__ inline int rightSlotCount(int width) { return kLeftSlots + rightSlot(width + kMaxRound) + 1; }

// Shared memory of a block: the right image's best (sum << 8 | d) per column, then the left's
// integer disparity per column.
__host__ __device__ inline size_t sharedBytesPerRow(int width) { return rightSlotCount(width) * sizeof(uint32_t) + width * sizeof(uint16_t); }

template <int D>
__global__ void __launch_bounds__(kWarpsPerRow * 32) winnerTakesAll(SgmParams p, SgmBuffers b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence) {
  constexpr int K = D / 32;
  static_assert(K <= kMaxDisparitiesPerLane && kStepsPerRound<K> <= kMaxRound, "the right image's slots");
  extern __shared__ uint32_t shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, y = blockIdx.x, width = b.width;
  const int slots = rightSlotCount(width);
  for (int i = threadIdx.x; i < slots; i += blockDim.x) shared[i] = kNoMatch;
  uint32_t* rightBest = shared + kLeftSlots;
  uint16_t* leftBest = reinterpret_cast<uint16_t*>(shared + slots);
  __syncthreads();

  uint16_t* out = disparity.row(y);
  uint8_t* conf = confidence.data ? confidence.row(y) : nullptr;
  constexpr int kRound = kStepsPerRound<K>;
  const int stretch = (width + kWarpsPerRow - 1) / kWarpsPerRow, end = min(width, (warp + 1) * stretch);
  for (int x0 = warp * stretch; x0 < end; x0 += kRound) {
    uint16_t* roundSums = b.volume + (static_cast<size_t>(y) * width + x0) * D + lane * K;  // pixel x0 + c's at c * D
    uint32_t sums[kRound][K / 2];
#pragma unroll
    for (int c = 0; c < kRound; ++c)
      if (x0 + c < end) {
        loadSumPairs<K>(roundSums + c * D, sums[c], costsInVolume(D) ? kSumMask : 0xFFFFu);
      } else {
#pragma unroll
        for (int i = 0; i < K / 2; ++i) sums[c][i] = kPastSum << 16 | kPastSum;
      }
    // Each reduction over the round's pixels at once: they are independent, and their latencies overlap.
    unsigned best[kRound];
#pragma unroll
    for (int c = 0; c < kRound; ++c) {
      unsigned local = kNoMatch;
      const int xr = max(x0 + c - lane * K - p.minDisparity, -1);  // of disparity lane * K; a lane with every match left of the image writes the left slots
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const unsigned ds = static_cast<unsigned>(lane * K + j / 2 * 2) * 0x101u + 0x100u;  // d of sums 2i and 2i + 1 in bytes 0 and 1
        unsigned candidate = __byte_perm(sums[c][j / 2], ds, j % 2 ? 0x7325 : 0x7104);  // sum << 8 | d
        local = min(local, candidate);
        atomicMin(rightBest + rightSlot(xr - j), candidate);
      }
      best[c] = warpMin(local);
    }
    // Zeros for the next frame's aggregation, once the round's sums are all in registers: cheaper
    // than a pass of its own, as this kernel is bound by its instructions.
    if constexpr (!costsInVolume(D)) {
#pragma unroll
      for (int c = 0; c < kRound; ++c)
        if (x0 + c < end) clearSums<K>(roundSums + c * D);
    }
    // The sum at disparity d (the same for every lane), from the lane that holds it. Its pair is
    // picked by masks: a select chain would be compiled to an indexed array in local memory.
    auto sumAt = [&](const uint32_t(&pairs)[K / 2], int d) {
      const int j = d % K;
      uint32_t pair = 0;
#pragma unroll
      for (int i = 0; i < K / 2; ++i) pair |= pairs[i] & -static_cast<uint32_t>(j / 2 == i);
      return __shfl_sync(kFullWarp, (pair >> (j % 2 * 16)) & 0xFFFFu, d / K);
    };
    int second[kRound];
    unsigned left[kRound], right[kRound];  // sums at the best d - 1 and d + 1
#pragma unroll
    for (int c = 0; c < kRound; ++c) {
      const int bestD = static_cast<int>(best[c] & 0xFF), fromWindow = lane * K + 1 - bestD;  // d - bestD + 1 of this lane's first d
      second[c] = kFarCost << 4;
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (static_cast<unsigned>(fromWindow + j) > 2u) second[c] = min(second[c], static_cast<int>(sumOf<K>(sums[c], j)));
      second[c] = warpMin(second[c]);
      left[c] = sumAt(sums[c], max(bestD - 1, 0));
      right[c] = sumAt(sums[c], min(bestD + 1, D - 1));
    }
    if (lane < kRound && x0 + lane < end) {  // lane c writes pixel x0 + c
      unsigned myBest = best[0], myLeft = left[0], myRight = right[0];
      int mySecond = second[0];
#pragma unroll
      for (int c = 1; c < kRound; ++c)
        if (lane == c) myBest = best[c], mySecond = second[c], myLeft = left[c], myRight = right[c];
      int x = x0 + lane, bestSum = static_cast<int>(myBest >> 8), bestD = static_cast<int>(myBest & 0xFF);
      bool unique = p.uniqueness <= 0 || mySecond * (100 - p.uniqueness) >= bestSum * 100;
      int offset = p.subpixel && bestD > 0 && bestD < D - 1 ? subpixelOffset(static_cast<int>(myLeft), bestSum, static_cast<int>(myRight)) : 0;
      out[x] = unique ? static_cast<uint16_t>(((bestD + p.minDisparity) << kSubpixelBits) + offset) : kInvalidDisparity;
      leftBest[x] = unique ? static_cast<uint16_t>(bestD) : kInvalidDisparity;
      if (conf) conf[x] = unique ? confidenceOf(bestSum, mySecond) : 0;
    }
  }
  __syncthreads();
  for (int x = threadIdx.x; x < width && p.lrMaxDiff >= 0; x += blockDim.x) {
    int d = leftBest[x];
    if (d == kInvalidDisparity) continue;
    int xr = x - d - p.minDisparity;
    const unsigned match = xr >= 0 ? rightBest[rightSlot(xr)] : kNoMatch;
    bool consistent = isMatch(match) && abs(static_cast<int>(match & 0xFF) - d) <= p.lrMaxDiff;
    if (!consistent) {
      out[x] = kInvalidDisparity;
      if (conf) conf[x] = 0;
    }
  }
  if (p.fill) {
    __syncthreads();
    if (warp == 0) fillRow(out, leftBest, width, lane);
  }
}

template <int D>
void launch(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, cudaStream_t stream) {
  size_t bytes = sharedBytesPerRow(b.width);
  allowSharedMemory(winnerTakesAll<D>, bytes, "SGM winner-takes-all (one image row)");
  winnerTakesAll<D><<<b.height, kWarpsPerRow * 32, bytes, stream>>>(p, b, disparity, confidence);
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
