// What the SGM matching-cost, path aggregation and winner-takes-all kernels share: the volume's
// word layout and warp reductions.
#pragma once
#include "cuda/sgm.cuh"

namespace pp::stereo {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// A 16-bit word of the volume: the sum of the path costs in its low kSumBits and, where
// costsInVolume, the matching cost (0..31) above them (else zero). A path cost is at most 31 + kMaxPenalty
// (rule 3), so eight of them never carry into the cost.
constexpr int kSumBits = 11, kCostBits = 16 - kSumBits;
constexpr unsigned kSumMask = (1u << kSumBits) - 1, kCostMask = (1u << kCostBits) - 1;
static_assert(kOutsideCost <= kCostMask && 8 * (31 + kMaxPenalty) <= kSumMask,
              "a word holds a cost and the sum of eight paths");

// int or unsigned: one instruction from sm_80 on, else a butterfly of shuffles.
template <class T> __device__ __forceinline__ T warpMin(T v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(kFullWarp, v);
#else
  for (int offset = 16; offset > 0; offset /= 2) v = min(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
#endif
}

constexpr int kFarCost = 0x3FFF;  // beyond the disparity range: never the minimum

// Adds four of a lane's path costs or sums (a run's, 16 bits each: `low` the first two, `high` the
// last two) to four consecutive words of the volume, as one 64-bit reduction. red.global returns
// nothing, so no warp waits for the L2; for sm_90, ptxas compiles the sweeps' atomicAdd, its result
// unused, as an atomic that returns (ATOMG), and the next pass of their loop waits for it.
__device__ __forceinline__ void addToVolume(uint16_t* at, uint32_t low, uint32_t high) {
  asm volatile("red.global.add.u64 [%0], %1;" ::"l"(at), "l"(static_cast<unsigned long long>(high) << 32 | low));
}

// Whether path costs go two to a register, 16-bit halves, where pairs take fewer instructions than
// one cost a register: sm_90's DPX instructions take the minimum of two halves, and min(a + b, c),
// in one instruction each; sm_80 to sm_89 (Orin) take the minimum of two halves in one, min.f16x2
// on the halves' bit patterns (a half below 0x7C00 is a finite number >= 0, subnormals included,
// whose order is its pattern's, and min returns one of its operands: exact for every path cost, at
// most kFarCost + kMaxPenalty), and the add in another. Earlier devices emulate both.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kPairedCosts = true;
#else
constexpr bool kPairedCosts = false;
#endif
static_assert(kFarCost + kMaxPenalty < 0x7C00, "pairs of path costs are finite halves");
// Of each half; a + b must not carry out of a half.
// (Unused where kCostPairs is false for every instance: CUDA 11 warns of it.)
[[maybe_unused]] __device__ __forceinline__ uint32_t minPairs(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && __CUDA_ARCH__ < 900
  uint32_t m;
  asm("min.f16x2 %0, %1, %2;" : "=r"(m) : "r"(a), "r"(b));
  return m;
#else
  return __vminu2(a, b);
#endif
}
__device__ __forceinline__ uint32_t addMinPairs(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDACC_VER_MAJOR__ >= 12
  return __viaddmin_u16x2(a, b, c);
#else
  return minPairs(a + b, c);
#endif
}

// One run of four disparities of a path step, as a lane keeps them: two words of 16-bit halves
// ((d0, d1), (d2, d3)) where kPairs, else a word each. `below` holds d0's lower neighbour in its
// (high) half, `above` d3's upper one in its (low) half; p1s, jumps (minPrev + P2) and minPrevs
// are spread to both halves where kPairs. Each next = cost + min(prev, lower + P1, upper + P1,
// jump) - minPrev, which never leaves 0..2^16 - 1 (so halves neither carry nor borrow). Returns
// their minimum (of both halves where kPairs).
template <bool kPairs>
__device__ __forceinline__ uint32_t pathRun(const uint32_t (&prev)[kPairs ? 2 : 4], uint32_t below, uint32_t above,
                                            const uint32_t (&cost)[kPairs ? 2 : 4], uint32_t p1s, uint32_t jumps,
                                            uint32_t minPrevs, uint32_t (&next)[kPairs ? 2 : 4]) {
  if constexpr (kPairs) {
    const uint32_t lower[2] = {__byte_perm(below, prev[0], 0x5432), __byte_perm(prev[0], prev[1], 0x5432)};
    const uint32_t upper[2] = {lower[1], __byte_perm(prev[1], above, 0x5432)};
#pragma unroll
    for (int j = 0; j < 2; ++j)
      next[j] = minPairs(addMinPairs(lower[j], p1s, prev[j]), addMinPairs(upper[j], p1s, jumps)) + cost[j] - minPrevs;
    return minPairs(next[0], next[1]);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t lower = i > 0 ? prev[i - 1] : below, upper = i < 3 ? prev[i + 1] : above;
      next[i] = cost[i] + min(min(prev[i], min(lower, upper) + p1s), jumps) - minPrevs;
    }
    return min(min(next[0], next[1]), min(next[2], next[3]));
  }
}

// The minimum over an aligned group of kLanes lanes (a walker's, or a column's in the sweeps). With
// kReduxHalves (16 lanes, sm_80 on) it is two whole-warp reductions, each over one half of the warp
// with the other half's values out of the way, rather than four shuffles: fewer registers at 256
// disparities (the aggregation's kWholeFront).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kRedux = true;
#else
constexpr bool kRedux = false;
#endif
template <int kLanes, bool kReduxHalves> __device__ __forceinline__ int walkerMin(int v) {
  if constexpr (kLanes == 32) {
    return warpMin(v);
  } else if constexpr (kLanes == 16 && kReduxHalves && kRedux) {
    const bool upper = threadIdx.x & 16;
    const int low = warpMin(upper ? 0x7FFFFFFF : v), high = warpMin(upper ? v : 0x7FFFFFFF);
    return upper ? high : low;
  } else {
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v = min(v, __shfl_xor_sync(kFullWarp, v, offset));
    return v;
  }
}

// A lane's place in a walker of kLanes lanes (an aligned group) and its neighbours there, the
// first and last lanes each other's (worked out once, not a step).
template <int kLanes> struct WalkerLane {
  int part, lower, upper;
  __device__ explicit WalkerLane(int lane)
      : part(lane % kLanes), lower((part + kLanes - 1) % kLanes), upper((part + 1) % kLanes) {}
};

// One step of a path for a walker of kLanes lanes, each lane holding kRuns runs of four disparities
// (run q's at q * (D / kRuns) on from the lane's first, laid out as in pathRun): `next` from
// `prev`, the step's matching costs `cost`, P1, and the jump minPrev + p2 (both 0 where a line
// starts, so that the path cost is the matching cost). Returns the walker's minimum of `next`, the
// next step's minPrev.
template <bool kPairs, int kLanes, int kRuns, bool kReduxHalves = false>
__device__ __forceinline__ int pathStep(const uint32_t (&prev)[kRuns][kPairs ? 2 : 4],
                                        const uint32_t (&cost)[kRuns][kPairs ? 2 : 4], const WalkerLane<kLanes>& lane,
                                        int p1, int minPrev, int p2, uint32_t (&next)[kRuns][kPairs ? 2 : 4]) {
  // The neighbours across a run's ends are in the walker's next lanes: lane part - 1's run q ends
  // below run q (lane kLanes - 1's run q - 1 for the first lane), likewise above.
  constexpr int kLast = kPairs ? 1 : 3;
  const int part = lane.part;
  uint32_t fromLower[kRuns], fromUpper[kRuns];
#pragma unroll
  for (int q = 0; q < kRuns; ++q) {
    fromLower[q] = __shfl_sync(kFullWarp, prev[q][kLast], lane.lower, kLanes);
    fromUpper[q] = __shfl_sync(kFullWarp, prev[q][0], lane.upper, kLanes);
  }
  constexpr uint32_t kSpread = kPairs ? 0x10001u : 1u;  // a value in each half
  const uint32_t jumps = (minPrev + p2) * kSpread, minPrevs = minPrev * kSpread, p1s = p1 * kSpread;
  constexpr uint32_t kFar = kFarCost * kSpread;
  uint32_t least = 0;
#pragma unroll
  for (int q = 0; q < kRuns; ++q) {
    const uint32_t below = part > 0 ? fromLower[q] : q > 0 ? fromLower[q - 1] : kFar;
    const uint32_t above = part < kLanes - 1 ? fromUpper[q] : q < kRuns - 1 ? fromUpper[q + 1] : kFar;
    const uint32_t runLeast = pathRun<kPairs>(prev[q], below, above, cost[q], p1s, jumps, minPrevs, next[q]);
    least = q == 0 ? runLeast : kPairs ? minPairs(least, runLeast) : min(least, runLeast);
  }
  return walkerMin<kLanes, kReduxHalves>(static_cast<int>(kPairs ? min(least & 0xFFFF, least >> 16) : least));
}

// Where a row walker keeps run q's i-th value: at q * kRun + rowSlot<kRun, kPhase>(i, walksRight),
// in order (kPhase -1), or rotated by kPhase (0..kRun - 1) in a loop unrolled by kRun (see
// moveRowCodes): walking right each value moves a register up a step, walking left down.
template <int kRun, int kPhase> __host__ __device__ constexpr int rowSlot(int i, bool walksRight) {
  return kPhase < 0 ? i : walksRight ? ((i - kPhase) % kRun + kRun) % kRun : (i + kPhase) % kRun;
}

// A row walker's value a disparity (its right census codes, or the right image's running bests in
// cuda/sgm_rows.cu) a column on (run q's i-th at q * kRun + i): each disparity's value is the one
// its neighbour below (above, walking left) had, one shuffle a run across the walker's lanes, and
// `enters` comes in at its lowest disparity (its highest, walking left). In place; or, with kPhase
// >= 0, by rotation (rowSlot): the value leaving a run gives its register to the one entering, and
// no register moves.
template <int kRuns, int kRun, int kLanes, int kPhase = -1>
__device__ __forceinline__ void moveRowCodes(uint32_t (&codes)[kRuns * kRun], bool walksRight,
                                             const WalkerLane<kLanes>& place, uint32_t enters) {
  // Each run's value that leaves it: its highest walking right, its lowest walking left.
  constexpr int kLeavesRight = rowSlot<kRun, kPhase>(kRun - 1, true), kLeavesLeft = rowSlot<kRun, kPhase>(0, false);
  uint32_t moved[kRuns];
#pragma unroll
  for (int q = 0; q < kRuns; ++q)
    moved[q] = __shfl_sync(kFullWarp, walksRight ? codes[q * kRun + kLeavesRight] : codes[q * kRun + kLeavesLeft],
                           walksRight ? place.lower : place.upper, kLanes);
  if (walksRight) {
#pragma unroll
    for (int q = kRuns - 1; q >= 0; --q) {
      if (kPhase < 0) {
#pragma unroll
        for (int i = kRun - 1; i > 0; --i) codes[q * kRun + i] = codes[q * kRun + i - 1];
      }
      codes[q * kRun + (kPhase < 0 ? 0 : kLeavesRight)] = place.part > 0 ? moved[q] : q > 0 ? moved[q - 1] : enters;
    }
  } else {
#pragma unroll
    for (int q = 0; q < kRuns; ++q) {
      if (kPhase < 0) {
#pragma unroll
        for (int i = 0; i < kRun - 1; ++i) codes[q * kRun + i] = codes[q * kRun + i + 1];
      }
      codes[q * kRun + (kPhase < 0 ? kRun - 1 : kLeavesLeft)] = place.part < kLanes - 1 ? moved[q]
                                                                : q < kRuns - 1         ? moved[q + 1]
                                                                                        : enters;
    }
  }
}

}  // namespace pp::stereo
