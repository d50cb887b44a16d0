// One step of one SGM path, as a warp computes it: the warp walks a line of pixels and each lane
// holds K = D / 32 consecutive disparities of the path cost in registers.
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
template <int K> __device__ __forceinline__ void storeSums(uint16_t* at, const int (&sums)[K]) {
  typename SumWord<K>::Type word;
  uint16_t* half = reinterpret_cast<uint16_t*>(&word);
#pragma unroll
  for (int j = 0; j < K; ++j) half[j] = static_cast<uint16_t>(sums[j]);
  *reinterpret_cast<typename SumWord<K>::Type*>(at) = word;
}

// What one step of a path needs that does not depend on the step before: the matching costs of
// this lane's disparities and the P2 for the intensity step. Kernels gather these for several
// steps ahead so that the loads overlap the recursion.
template <int K> struct StepInput {
  int cost[K];
  int p2;
};

template <int K>
__device__ __forceinline__ void stepInput(const SgmParams& p, const SgmBuffers& b, int x, int y, int dx, int dy, bool head, int lane, StepInput<K>& in) {
  size_t row = static_cast<size_t>(y) * b.width;
  uint32_t centre = b.censusLeft[row + x];
#pragma unroll
  for (int j = 0; j < K; ++j) {
    int xr = x - lane * K - j - p.minDisparity;
    in.cost[j] = xr >= 0 ? __popc(centre ^ b.censusRight[row + xr]) : kOutsideCost;
  }
  in.p2 = p.p2Adaptive && !head ? adaptiveP2(p, abs(static_cast<int>(b.left.row(y)[x]) - static_cast<int>(b.left.row(y - dy)[x - dx]))) : p.p2;
}

// The path cost for this lane's disparities lane*K .. lane*K+K-1 from the previous pixel's
// (`prev`, its minimum `minPrev`; none when `head`). Leaves the new costs in prev and their
// minimum over the warp in minPrev.
template <int K>
__device__ __forceinline__ void stepRecurse(const SgmParams& p, const StepInput<K>& in, bool head, int lane, int (&prev)[K], int& minPrev) {
  if (head) {
#pragma unroll
    for (int j = 0; j < K; ++j) prev[j] = in.cost[j];
  } else {
    int below = __shfl_up_sync(kFullWarp, prev[K - 1], 1), above = __shfl_down_sync(kFullWarp, prev[0], 1);
    if (lane == 0) below = kFarCost;
    if (lane == 31) above = kFarCost;
    int jump = minPrev + in.p2, next[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      int lower = j > 0 ? prev[j - 1] : below, upper = j < K - 1 ? prev[j + 1] : above;
      next[j] = in.cost[j] + min(min(prev[j], min(lower, upper) + p.p1), jump) - minPrev;
    }
#pragma unroll
    for (int j = 0; j < K; ++j) prev[j] = next[j];
  }
  int local = prev[0];
#pragma unroll
  for (int j = 1; j < K; ++j) local = min(local, prev[j]);
  minPrev = warpMin(local);
}

// Steps a warp takes per round: their volume loads and census reads are issued together, ahead of
// the recursion that needs them.
template <int K> constexpr int kStepsPerRound = K >= 8 ? 4 : 8;

}  // namespace pp::stereo
