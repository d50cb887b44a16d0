// What the SGM matching-cost, path aggregation and winner-takes-all kernels share: the volume's
// word layout, warp reductions and the loads (and zeroing) of K = D / 32 consecutive sums a lane.
#pragma once
#include "cuda/sgm.cuh"

namespace pp::stereo {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;
constexpr int kFarCost = 0x3FFF;  // beyond the disparity range: never the minimum

// A 16-bit word of the volume: the sum of the path costs in its low kSumBits and, where
// costsInVolume, the matching cost (0..31) above them (else zero). A path cost is at most 31 + 224
// (rule 3), so eight of them never carry into the cost.
constexpr int kSumBits = 11, kCostBits = 16 - kSumBits;
constexpr unsigned kSumMask = (1u << kSumBits) - 1, kCostMask = (1u << kCostBits) - 1;
static_assert(kOutsideCost <= kCostMask && 8 * (31 + 224) <= kSumMask, "a word holds a cost and the sum of eight paths");

// int or unsigned: one instruction from sm_80 on, else a butterfly of shuffles.
template <class T> __device__ __forceinline__ T warpMin(T v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(kFullWarp, v);
#else
  for (int offset = 16; offset > 0; offset /= 2) v = min(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
#endif
}

// K 16-bit words as one aligned load or store (4, 8 or 16 bytes), read as K / 2 pairs.
template <int K> struct SumWord;
template <> struct SumWord<2> { using Type = uint32_t; };
template <> struct SumWord<4> { using Type = uint2; };
template <> struct SumWord<8> { using Type = uint4; };

// K sums as pairs (sum 2i in the low half of pair i), each half masked by `mask`.
template <int K> __device__ __forceinline__ void loadSumPairs(const uint16_t* at, uint32_t (&pairs)[K / 2], unsigned mask) {
  typename SumWord<K>::Type word = *reinterpret_cast<const typename SumWord<K>::Type*>(at);
  const uint32_t* pair = reinterpret_cast<const uint32_t*>(&word);
#pragma unroll
  for (int i = 0; i < K / 2; ++i) pairs[i] = pair[i] & (mask << 16 | mask);
}
template <int K> __device__ __forceinline__ unsigned sumOf(const uint32_t (&pairs)[K / 2], int j) { return j % 2 ? pairs[j / 2] >> 16 : pairs[j / 2] & 0xFFFFu; }

template <int K> __device__ __forceinline__ void clearSums(uint16_t* at) { *reinterpret_cast<typename SumWord<K>::Type*>(at) = {}; }

// Pixels a winner-takes-all warp takes per round: their sum loads are issued together, ahead of the
// reductions that need them.
template <int K> constexpr int kStepsPerRound = K >= 8 ? 4 : 8;

}  // namespace pp::stereo
