// The last SGM step, a 3x3 median of the valid disparities around each valid one, and the
// disparity-to-depth conversion.
#include "cuda/dependent_launch.cuh"
#include "cuda/sgm.cuh"

namespace pp::stereo {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__device__ __forceinline__ void order(unsigned& a, unsigned& b) {
  unsigned lo = min(a, b);
  b = max(a, b), a = lo;
}

// The neighbourhood in registers, invalid and outside values as kInvalidDisparity (above every
// disparity, so they sort last), sorted by a 9-input network; the lower median of the n valid ones
// is the ((n - 1) / 2)-th.
__global__ void median(ImageView<const uint16_t> in, ImageView<uint16_t> out) {
  waitForPreviousKernel();
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  uint16_t centre = in.row(y)[x];
  if (centre == kInvalidDisparity) {
    out.row(y)[x] = centre;
    return;
  }
  unsigned v[9];
  int valid = 0;
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    int sx = x + i % 3 - 1, sy = y + i / 3 - 1;
    v[i] = sx < 0 || sy < 0 || sx >= in.width || sy >= in.height ? kInvalidDisparity : in.row(sy)[sx];
    valid += v[i] != kInvalidDisparity;
  }
  // Knuth's 25-comparator network for 9 inputs.
  order(v[0], v[1]), order(v[3], v[4]), order(v[6], v[7]), order(v[1], v[2]), order(v[4], v[5]), order(v[7], v[8]);
  order(v[0], v[1]), order(v[3], v[4]), order(v[6], v[7]), order(v[0], v[3]), order(v[3], v[6]), order(v[0], v[3]);
  order(v[1], v[4]), order(v[4], v[7]), order(v[1], v[4]), order(v[2], v[5]), order(v[5], v[8]), order(v[2], v[5]);
  order(v[1], v[3]), order(v[5], v[7]), order(v[2], v[6]), order(v[4], v[6]), order(v[2], v[4]), order(v[2], v[3]);
  order(v[5], v[6]);
  unsigned m = v[0];
#pragma unroll
  for (int i = 1; i < 9; ++i)
    if (i == (valid - 1) / 2) m = v[i];
  out.row(y)[x] = static_cast<uint16_t>(m);
}

__global__ void toDepth(ImageView<const uint16_t> disparity, ImageView<float> depth, DepthModel m) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= disparity.width || y >= disparity.height) return;
  depth.row(y)[x] = depthOf(m, disparity.row(y)[x]);
}

dim3 gridFor(int width, int height) { return dim3((width + kBlockX - 1) / kBlockX, (height + kBlockY - 1) / kBlockY); }

}  // namespace

void launchDisparityMedian(ImageView<const uint16_t> in, ImageView<uint16_t> out, cudaStream_t stream) {
  launchDependent(median, gridFor(in.width, in.height), dim3(kBlockX, kBlockY), 0, stream, in, out);
}

void launchDisparityToDepth(ImageView<const uint16_t> disparity, ImageView<float> depth, DepthModel m,
                            cudaStream_t stream) {
  toDepth<<<gridFor(disparity.width, disparity.height), dim3(kBlockX, kBlockY), 0, stream>>>(disparity, depth, m);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::stereo
