// The cascade on the pyramid's windows: stage 0 everywhere, OpenCV's skip rule and compaction, then
// groups of stages on the survivors. The float and double operations are OpenCV's, with rounding
// explicit so that nothing is fused.
#include <stdexcept>
#include <string>

#include "cuda/haar.cuh"
#include "cuda/occupancy.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::faces {

namespace {

constexpr int kWarps = 4, kMaxColumns = 4096;

__device__ __forceinline__ int32_t rectSum(const int32_t* sums, int pitch, int x, int y, int w, int h) {
  const int32_t* top = sums + static_cast<size_t>(y) * pitch + x;
  const int32_t* bottom = top + static_cast<size_t>(h) * pitch;
  return top[0] - top[w] - bottom[0] + bottom[w];
}

// One stump's vote for a window: its feature, normalised, against the threshold.
__device__ __forceinline__ double stumpVote(const GpuStump& s, const int32_t* sums, int pitch, int x, int y, float norm) {
  float value = __fadd_rn(__fmul_rn(__ldg(&s.weight[0]), static_cast<float>(rectSum(sums, pitch, x + __ldg(&s.x[0]), y + __ldg(&s.y[0]), __ldg(&s.w[0]), __ldg(&s.h[0])))),
                          __fmul_rn(__ldg(&s.weight[1]), static_cast<float>(rectSum(sums, pitch, x + __ldg(&s.x[1]), y + __ldg(&s.y[1]), __ldg(&s.w[1]), __ldg(&s.h[1])))));
  float w2 = __ldg(&s.weight[2]);
  if (w2 != 0.f) value = __fadd_rn(value, __fmul_rn(w2, static_cast<float>(rectSum(sums, pitch, x + __ldg(&s.x[2]), y + __ldg(&s.y[2]), __ldg(&s.w[2]), __ldg(&s.h[2])))));
  value = __fmul_rn(value, norm);
  return static_cast<double>(value < __ldg(&s.threshold) ? __ldg(&s.left) : __ldg(&s.right));
}

// Stage s on one window by kThreads threads: lane takes stumps lane, lane + kThreads, ... and the
// warp adds their sums (kThreads 32). With one thread the stumps are summed in OpenCV's order; a
// warp adds them in another, so a flip needs a stage sum within rounding of its threshold.
template <int kThreads>
__device__ __forceinline__ bool stagePasses(const CascadeArgs& c, int s, const int32_t* sums, int pitch, int x, int y, float norm, int lane) {
  GpuStage stage = c.stages[s];
  double total = 0;
  for (int k = lane; k < stage.count; k += kThreads) total = __dadd_rn(total, stumpVote(c.stumps[stage.first + k], sums, pitch, x, y, norm));
  if (kThreads == 32)
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xFFFFFFFFu, total, offset);
  return !(total < static_cast<double>(stage.threshold));
}

// Code per window position: -1 flat (variance rule), 0 rejected by stage 0, 1 passed.
__global__ void firstStage(CascadeArgs c, PyramidArgs a, int8_t* codes, float* norms) {
  int bx, by;
  const LevelGeometry g = levelOfTile(a, blockIdx.x, true, bx, by);
  int col = bx * kTileX + threadIdx.x, row = by * kTileY + threadIdx.y;
  if (col >= g.cols || row >= g.rows) return;
  int x = col * g.step, y = row * g.step, pitch = g.width + 1;
  const int32_t* sums = a.sums + g.integralOffset;
  const uint32_t* squares = a.squares + g.integralOffset;
  int nw = c.windowWidth - 2, nh = c.windowHeight - 2;
  int32_t valsum = rectSum(sums, pitch, x + 1, y + 1, nw, nh);
  const uint32_t* top = squares + static_cast<size_t>(y + 1) * pitch + x + 1;
  const uint32_t* bottom = top + static_cast<size_t>(nh) * pitch;
  uint32_t valsq = top[0] - top[nw] - bottom[0] + bottom[nw];
  double area = static_cast<double>(nw) * nh;
  double nf = __dsub_rn(__dmul_rn(area, static_cast<double>(valsq)), __dmul_rn(static_cast<double>(valsum), static_cast<double>(valsum)));
  int8_t code = -1;
  float norm = 0.f;
  if (nf > 0.) {
    norm = static_cast<float>(__ddiv_rn(1., __dsqrt_rn(nf)));
    if (__dmul_rn(area, static_cast<double>(norm)) < 1e-1) code = stagePasses<1>(c, 0, sums, pitch, x, y, norm, 0) ? 1 : 0;
  }
  size_t i = g.codeOffset + static_cast<size_t>(row) * g.cols + col;
  codes[i] = code;
  norms[i] = norm;
}

// A warp per row of window positions: OpenCV looks at the window after one that stage 0 rejected
// only when it skipped that one, so lane 0 walks the row; then the warp appends the windows looked
// at that passed.
__global__ void skipAndCompact(PyramidArgs a, const int8_t* codes, const float* norms, Candidate* out, int* outCount, int capacity) {
  __shared__ int8_t take[kWarps][kMaxColumns];
  const LevelGeometry g = a.geometry[blockIdx.y];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = blockIdx.x * kWarps + warp;
  if (row >= g.rows) return;  // whole warps
  const int8_t* rowCodes = codes + g.codeOffset + static_cast<size_t>(row) * g.cols;
  for (int col = lane; col < g.cols; col += 32) take[warp][col] = rowCodes[col];
  __syncwarp();
  if (lane == 0) {
    bool skipNext = false;
    for (int col = 0; col < g.cols; ++col) {
      int8_t code = take[warp][col];
      take[warp][col] = !skipNext && code == 1;
      skipNext = !skipNext && code == 0;
    }
  }
  __syncwarp();
  for (int base = 0; base < g.cols; base += 32) {
    int col = base + lane;
    bool keep = col < g.cols && take[warp][col];
    unsigned mask = __ballot_sync(0xFFFFFFFFu, keep);
    int first = 0;
    if (lane == 0 && mask) first = atomicAdd(outCount, __popc(mask));
    first = __shfl_sync(0xFFFFFFFFu, first, 0);
    int slot = first + __popc(mask & ((1u << lane) - 1));
    if (keep && slot < capacity)
      out[slot] = {static_cast<uint16_t>(blockIdx.y), static_cast<uint16_t>(col * g.step), static_cast<uint16_t>(row * g.step),
                   norms[g.codeOffset + static_cast<size_t>(row) * g.cols + col]};
  }
}

// Stages [first, last) on each candidate. kByWarp false: a thread per candidate (early stages:
// short, and most windows reach them). kByWarp: a warp per candidate, so a stage of 200 stumps takes
// 7 rounds instead of 200 (late stages see few windows, which alone would not fill the device).
template <bool kByWarp>
__global__ void stages(CascadeArgs c, PyramidArgs a, int first, int last, const Candidate* in, const int* inCount, Candidate* out, int* outCount, int capacity) {
  constexpr int kThreadsPerCandidate = kByWarp ? 32 : 1;
  int count = min(*inCount, capacity), lane = threadIdx.x % kThreadsPerCandidate, candidates = gridDim.x * blockDim.x / kThreadsPerCandidate;
  for (int i = (blockIdx.x * blockDim.x + threadIdx.x) / kThreadsPerCandidate; i < count; i += candidates) {
    Candidate w = in[i];
    const LevelGeometry& g = a.geometry[w.level];
    const int32_t* sums = a.sums + g.integralOffset;
    bool passed = true;
    for (int s = first; s < last && passed; ++s) passed = stagePasses<kThreadsPerCandidate>(c, s, sums, g.width + 1, w.x, w.y, w.norm, lane);
    if (passed && lane == 0) {
      int slot = atomicAdd(outCount, 1);
      if (slot < capacity) out[slot] = w;
    }
  }
}

}  // namespace

void launchFirstStage(const CascadeArgs& c, const PyramidArgs& a, int cols, int rows, int8_t* codes, float* norms, Candidate* out, int* outCount, int capacity,
                      cudaStream_t stream) {
  if (cols > kMaxColumns) throw std::invalid_argument("face_detect: at most " + std::to_string(kMaxColumns) + " window positions a row");
  if (a.windowTiles == 0) return;  // no level fits a window
  firstStage<<<a.windowTiles, dim3(kTileX, kTileY), 0, stream>>>(c, a, codes, norms);
  PP_CUDA_CHECK_LAUNCH();
  skipAndCompact<<<dim3((rows + kWarps - 1) / kWarps, a.levels), kWarps * 32, 0, stream>>>(a, codes, norms, out, outCount, capacity);
  PP_CUDA_CHECK_LAUNCH();
}

constexpr int kStagesThreads = 128;

int stagesResidentBlocks(bool byThread) { return residentBlocks(byThread ? stages<false> : stages<true>, kStagesThreads); }

void launchStages(const CascadeArgs& c, const PyramidArgs& a, int first, int last, const Candidate* in, const int* inCount, Candidate* out, int* outCount,
                  int capacity, bool byThread, int blocks, cudaStream_t stream) {
  (byThread ? stages<false> : stages<true>)<<<blocks, kStagesThreads, 0, stream>>>(c, a, first, last, in, inCount, out, outCount, capacity);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
