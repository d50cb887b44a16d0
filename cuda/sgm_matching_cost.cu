// Matching costs (rule 2) into the volume where costsInVolume (256 disparities): each 16-bit word
// gets its pixel's cost at that disparity in its top kCostBits and a zero sum below, which the path
// directions then add to. So each cost is computed once rather than once a direction, each
// direction reads its costs from the words it adds to, and the volume needs no clearing.
#include "cuda/dependent_launch.cuh"
#include "cuda/sgm_path.cuh"

namespace pp::stereo {

namespace {

// A block's: a stretch of kPixels of one row (64 measured fastest).
constexpr int kThreads = 256, kWarps = kThreads / 32, kPixels = 64;

// The stretch's left codes and the right codes its matches reach are staged in shared memory. A
// warp takes a pixel at a time: lane l the disparities l + 32k (consecutive codes, so distinct
// banks), its words then stored from shared memory in whole lines.
template <int D> __global__ void __launch_bounds__(kThreads) matchingCost(SgmParams p, SgmBuffers b) {
  constexpr int kRight = kPixels + D - 1;
  __shared__ uint32_t left[kPixels], right[kRight];  // right[i]: the code at firstRight + i
  __shared__ alignas(16) uint16_t words[kWarps][D];
  waitForPreviousKernel();
  const int x0 = blockIdx.x * kPixels, y = blockIdx.y, firstRight = x0 - p.minDisparity - (D - 1);
  const size_t rowStart = static_cast<size_t>(y) * b.width;
  for (int i = threadIdx.x; i < kRight; i += kThreads) {
    const int xr = firstRight + i;
    right[i] = xr >= 0 && xr < b.width ? b.censusRight[rowStart + xr] : 0;  // outside the image: never read
  }
  if (threadIdx.x < kPixels)
    left[threadIdx.x] = b.censusLeft[rowStart + min(x0 + static_cast<int>(threadIdx.x), b.width - 1)];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int pixel = warp; pixel < kPixels && x0 + pixel < b.width; pixel += kWarps) {
    const int x = x0 + pixel;
    const uint32_t code = left[pixel];
#pragma unroll
    for (int d = lane; d < D; d += 32) {
      const int xr = x - p.minDisparity - d;
      words[warp][d] =
          static_cast<uint16_t>((xr >= 0 ? __popc(code ^ right[xr - firstRight]) : kOutsideCost) << kSumBits);
    }
    __syncwarp();
    uint4* out = reinterpret_cast<uint4*>(b.volume + (rowStart + x) * D);
    for (int i = lane; i < D / 8; i += 32) out[i] = reinterpret_cast<const uint4*>(words[warp])[i];
    __syncwarp();
  }
}

}  // namespace

void launchMatchingCost(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream) {
  constexpr int D = 256;
  static_assert(costsInVolume(D));
  if (p.disparities != D)
    throw std::logic_error("SGM: the volume holds matching costs only at 256 disparities, not " +
                           std::to_string(p.disparities));
  launchDependent(matchingCost<D>, dim3((b.width + kPixels - 1) / kPixels, b.height), kThreads, 0, stream, p, b);
}

}  // namespace pp::stereo
