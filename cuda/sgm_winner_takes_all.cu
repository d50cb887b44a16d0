// Winner takes all: a block per row, its warps on consecutive stretches of the row, read each
// pixel's sums a round of pixels at a time (lane l holds the pairs of disparities 2l + 64i and
// 2l + 64i + 1). The right image's best match at each column collects in shared memory as the row
// goes by; the left-right check and the fill run when the whole row is done. Unless the volume holds
// the matching costs, the sums read are left zero.
#include "cuda/dependent_launch.cuh"
#include "cuda/sgm_path.cuh"  // the volume's words, warp reductions
#include "cuda/sgm_winner.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::stereo {

namespace {

// Warps of a row's block: below 256 disparities 16 rather than 8 (shorter stretches, the same
// threads an SM); at 256, 8.
template <int D> constexpr int kWarpsPerRow = D < 256 ? 16 : 8;

// Pixels a warp takes per round: their sum loads are issued together, ahead of the reductions
// that need them.
template <int D> constexpr int kRound = D >= 256 ? 4 : 8;

// Lane l's sums of one pixel as D / 64 pairs: pair i holds disparities 2l + 64i (low half) and
// 2l + 64i + 1, each half masked by `mask`. Each pair's load is a warp's 128 consecutive bytes.
template <int D> __device__ __forceinline__ void loadSumPairs(const uint16_t* pixel, int lane,
                                                              uint32_t (&pairs)[D / 64], unsigned mask) {
#pragma unroll
  for (int i = 0; i < D / 64; ++i)
    pairs[i] = reinterpret_cast<const uint32_t*>(pixel)[lane + 32 * i] & (mask << 16 | mask);
}
template <int D> __device__ __forceinline__ void clearSums(uint16_t* pixel, int lane) {
#pragma unroll
  for (int i = 0; i < D / 64; ++i) reinterpret_cast<uint32_t*>(pixel)[lane + 32 * i] = 0;
}

// The right image's best per column, in shared memory: column xr at u = xr + kLeft (every
// candidate's column, down to -kLeft, has a slot), the even u first, then the odd. For each
// candidate a warp's lanes hit 32 columns two apart, all of one parity: consecutive slots, in
// distinct banks. Slots past the width take a round's pixels past the row's end.
template <int D> struct RightSlots {
  static constexpr int kLeft = D + kRound<D>;
  int half;
  __host__ __device__ explicit RightSlots(int width) : half((width + kLeft + kRound<D>) / 2 + 1) {}
  __host__ __device__ int count() const { return 2 * half; }
  __device__ int operator()(int xr) const {
    const int u = xr + kLeft;
    return (u & 1) * half + (u >> 1);
  }
};
// A candidate at u0 + delta (delta known at compile time) from the slots of u0 and u0 + 1: no
// address arithmetic for any atomic.
__device__ __forceinline__ uint32_t* slotNear(uint32_t* ofU0, uint32_t* ofU1, int delta) {
  return delta & 1 ? ofU1 + (delta - 1) / 2 : ofU0 + delta / 2;
}

// Sums of a round's pixels past the warp's stretch: above any real sum (8 x 255), so their
// candidates are never taken as the right image's match.
constexpr unsigned kPastSum = 0xFFFF;
__device__ __forceinline__ bool isMatch(unsigned best) { return best < kPastSum << 8; }

// Shared memory of a block: the right image's best (sum << 8 | d) per slot, then the left's
// integer disparity per column.
template <int D> size_t sharedBytesPerRow(int width) {
  return RightSlots<D>(width).count() * sizeof(uint32_t) + width * sizeof(uint16_t);
}

template <int D> __global__ void __launch_bounds__(kWarpsPerRow<D> * 32)
    winnerTakesAll(SgmParams p, SgmBuffers b, ImageView<uint16_t> disparity, ImageView<uint8_t> confidence,
                   bool clear) {
  constexpr int kPairs = D / 64, kPixels = kRound<D>;
  constexpr unsigned kSumPart = costsInVolume(D) ? kSumMask : 0xFFFFu;  // of a word: its sum, without a cost above it
  static_assert(D % 64 == 0 && D <= 256, "lanes hold pairs 64 apart; a candidate's d takes a byte");
  extern __shared__ uint32_t shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, y = blockIdx.x, width = b.width;
  const RightSlots<D> rightSlot(width);
  for (int i = threadIdx.x; i < rightSlot.count(); i += blockDim.x) shared[i] = kNoMatch;
  uint32_t* rightBest = shared;
  uint16_t* leftBest = reinterpret_cast<uint16_t*>(shared + rightSlot.count());
  waitForPreviousKernel();  // before the volume is read
  __syncthreads();

  uint16_t* out = disparity.row(y);
  uint8_t* conf = confidence.data ? confidence.row(y) : nullptr;
  const int stretch = (width + kWarpsPerRow<D> - 1) / kWarpsPerRow<D>, end = min(width, (warp + 1) * stretch);
  for (int x0 = warp * stretch; x0 < end; x0 += kPixels) {
    uint16_t* roundSums = b.volume + (static_cast<size_t>(y) * width + x0) * D;  // pixel x0 + c's at c * D
    uint32_t sums[kPixels][kPairs];
#pragma unroll
    for (int c = 0; c < kPixels; ++c)
      if (x0 + c < end) {
        loadSumPairs<D>(roundSums + c * D, lane, sums[c], kSumPart);
      } else {
#pragma unroll
        for (int i = 0; i < kPairs; ++i) sums[c][i] = kPastSum << 16 | kPastSum;
      }
    // The right-image column of pixel x0's disparity 2 * lane. Where minDisparity puts a whole round
    // left of the image, a column just left of it with the same parity stands in, so that every
    // candidate column stays above -RightSlots::kLeft.
    int column = x0 - p.minDisparity;
    if (column < -kPixels) column = -kPixels - (column & 1);
    column -= 2 * lane;
    uint32_t* ofColumn = rightBest + rightSlot(column);
    uint32_t* ofNext = rightBest + rightSlot(column + 1);
    // Each reduction over the round's pixels at once: they are independent, and their latencies overlap.
    unsigned best[kPixels];
#pragma unroll
    for (int c = 0; c < kPixels; ++c) {
      unsigned local = kNoMatch;
#pragma unroll
      for (int i = 0; i < kPairs; ++i) {
        const unsigned ds =
            static_cast<unsigned>(2 * lane + 64 * i) * 0x101u + 0x100u;  // d of the pair's halves in bytes 0 and 1
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const unsigned candidate = __byte_perm(sums[c][i], ds, j ? 0x7325 : 0x7104);  // sum << 8 | d
          local = min(local, candidate);
          atomicMin(slotNear(ofColumn, ofNext, c - 64 * i - j), candidate);
        }
      }
      best[c] = warpMin(local);
    }
    // Lane c takes pixel x0 + c. For its sub-pixel offset it reads the sums at the best d - 1 and
    // d + 1 again (the L1 mostly holds them): fewer instructions than shuffles from the lanes that
    // hold them.
    const bool writes = lane < kPixels && x0 + lane < end;
    unsigned myBest = best[0];
#pragma unroll
    for (int c = 1; c < kPixels; ++c)
      if (lane == c) myBest = best[c];
    const int bestSum = static_cast<int>(myBest >> 8), bestD = static_cast<int>(myBest & 0xFF);
    const bool refine = p.subpixel && writes && bestD > 0 && bestD < D - 1;
    int left = 0, right = 0;
    if (refine) {
      const uint16_t* pixel = roundSums + lane * D;
      left = pixel[bestD - 1] & kSumPart;
      right = pixel[bestD + 1] & kSumPart;
    }
    int second[kPixels];
#pragma unroll
    for (int c = 0; c < kPixels; ++c) {
      const int fromWindow = 2 * lane + 1 - static_cast<int>(best[c] & 0xFF);  // d - bestD + 1 of this lane's first d
      unsigned least = 0xFFFFFFFFu;  // two halves' minima at once, the window's halves masked to 0xFFFF
#pragma unroll
      for (int i = 0; i < kPairs; ++i) {
        const int t = fromWindow + 64 * i;
        const unsigned window =
            (static_cast<unsigned>(t) <= 2u ? 0xFFFFu : 0u) | (static_cast<unsigned>(t + 1) <= 2u ? 0xFFFF0000u : 0u);
        least = __vminu2(least, sums[c][i] | window);
      }
      second[c] = warpMin(static_cast<int>(min(least & 0xFFFFu, least >> 16)));
    }
    if (writes) {
      int mySecond = second[0];
#pragma unroll
      for (int c = 1; c < kPixels; ++c)
        if (lane == c) mySecond = second[c];
      const int x = x0 + lane;
      const PixelWinner w = winnerOf<D>(p, bestSum, bestD, mySecond, left, right);
      out[x] = w.disparity;
      leftBest[x] = w.d;
      if (conf) conf[x] = w.confidence;
    }
    // Zeros for the next frame's aggregation, once the round is done: cheaper than a memset pass.
    if (!costsInVolume(D) && clear) {
      __syncwarp();  // every lane's sums read before any lane clears them
#pragma unroll
      for (int c = 0; c < kPixels; ++c)
        if (x0 + c < end) clearSums<D>(roundSums + c * D, lane);
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

template <int D> void launch(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity,
                             ImageView<uint8_t> confidence, cudaStream_t stream, bool clear) {
  size_t bytes = sharedBytesPerRow<D>(b.width);
  allowSharedMemory(winnerTakesAll<D>, bytes, "SGM winner-takes-all (one image row)");
  launchDependent(winnerTakesAll<D>, b.height, kWarpsPerRow<D> * 32, bytes, stream, p, b, disparity, confidence, clear);
}

}  // namespace

void launchWinnerTakesAll(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity,
                          ImageView<uint8_t> confidence, cudaStream_t stream, bool clear) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, disparity, confidence, stream, clear);
    case 128: return launch<128>(p, b, disparity, confidence, stream, clear);
    case 256: return launch<256>(p, b, disparity, confidence, stream, clear);
    default:
      throw std::invalid_argument("SGM: disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
