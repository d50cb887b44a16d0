// What the SGM path aggregation and winner-takes-all kernels share: warp reductions and the loads
// (and zeroing) of K = D / 32 consecutive 16-bit sums a lane.
#pragma once
#include "cuda/sgm.cuh"

namespace pp::stereo {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;
constexpr int kFarCost = 0x3FFF;  // beyond the disparity range: never the minimum

// int or unsigned: one instruction from sm_80 on, else a butterfly of shuffles.
template <class T> __device__ __forceinline__ T warpMin(T v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(kFullWarp, v);
#else
  for (int offset = 16; offset > 0; offset /= 2) v = min(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
#endif
}
__device__ __forceinline__ unsigned warpOr(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_or_sync(kFullWarp, v);
#else
  for (int offset = 16; offset > 0; offset /= 2) v |= __shfl_xor_sync(kFullWarp, v, offset);
  return v;
#endif
}

// K 16-bit sums as one aligned load or store (4, 8 or 16 bytes).
template <int K> struct SumWord;
template <> struct SumWord<2> { using Type = uint32_t; };
template <> struct SumWord<4> { using Type = uint2; };
template <> struct SumWord<8> { using Type = uint4; };

template <int K> __device__ __forceinline__ void loadSums(const uint16_t* at, int (&sums)[K]) {
  typename SumWord<K>::Type word = *reinterpret_cast<const typename SumWord<K>::Type*>(at);
  const uint16_t* half = reinterpret_cast<const uint16_t*>(&word);
#pragma unroll
  for (int j = 0; j < K; ++j) sums[j] = half[j];
}

template <int K> __device__ __forceinline__ void clearSums(uint16_t* at) { *reinterpret_cast<typename SumWord<K>::Type*>(at) = {}; }

// Pixels a winner-takes-all warp takes per round: their sum loads are issued together, ahead of the
// reductions that need them.
template <int K> constexpr int kStepsPerRound = K >= 8 ? 4 : 8;

}  // namespace pp::stereo
