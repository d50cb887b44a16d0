// The cascade's first stage on every window position of every level, from a tile's integrals in
// shared memory, then OpenCV's skip rule along each row.
#include "cuda/cuda_check.hpp"
#include "cuda/haar_norm.hpp"
#include "cuda/haar_tile.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::faces {

namespace {

constexpr int kThreads = 256;
constexpr int kRowWarps = 4;

// Code per window position: -1 flat (variance rule), 0 rejected by stage 0, 1 passed. The squared
// integral gives each window's sum of squares first; the same shared memory then holds the
// integral for the sums and the stage's rectangles. The variance normalisation is OpenCV's double
// arithmetic's result without FP64 (cuda/haar_norm.hpp).
__global__ void __launch_bounds__(kThreads, 4) firstStage(CascadeArgs c, PyramidArgs a, int8_t* codes, float* norms) {
  extern __shared__ uint32_t integral[];
  __shared__ uint32_t squares[kWindowTileX * kWindowTileY];  // each window's sum of squares
  const Tile t = tileOf(a, c);
  const int nw = c.windowWidth - 2, nh = c.windowHeight - 2;
  const int b = sizeof(uint32_t);  // the window less a pixel all round, as byte offsets
  const int4 inset = {b * (t.pitch + 1), b * (t.pitch + 1 + nw), b * ((nh + 1) * t.pitch + 1),
                      b * ((nh + 1) * t.pitch + 1 + nw)};
  buildIntegral<true>(integral, t);
  for (int p = threadIdx.x; p < kWindowTileX * kWindowTileY; p += kThreads) {
    TileWindow w = tileWindow(t, p);
    squares[p] = w.valid ? static_cast<uint32_t>(rectSum(integral + w.y * t.pitch + w.x, inset)) : 0u;
  }
  __syncthreads();  // every square read before the sums overwrite them
  buildIntegral<false>(integral, t);
  const int area = nw * nh;
  for (int p = threadIdx.x; p < kWindowTileX * kWindowTileY; p += kThreads) {
    TileWindow w = tileWindow(t, p);
    if (!w.valid) continue;
    const uint32_t* at = integral + w.y * t.pitch + w.x;
    const int32_t valsum = rectSum(at, inset);
    // OpenCV's area * squares - valsum^2 in double is exact (below 2^46), so equal to this.
    const long long nf = static_cast<long long>(area) * squares[p] - static_cast<long long>(valsum) * valsum;
    int8_t code = -1;
    float norm = 0.f;
    if (nf > 0) {
      norm = inverseSqrt(static_cast<uint64_t>(nf));
      if (belowTenth(area, norm)) code = stageSum(c, 0, at, norm, 0, 1) >= __ldg(&c.stages[0].threshold) ? 1 : 0;
    }
    codes[w.index] = code;
    norms[w.index] = norm;
  }
}

// A warp per row of window positions, OpenCV's rule: the window after one that stage 0 rejected is
// looked at only when that one was skipped. So along a run of rejections the windows are looked at
// and skipped in turn, from the state before the run: looked at after a window that was not
// rejected. The warp takes the row 32 windows at a time; a lane finds the run of rejections before
// its window in the warp's ballot, and its parity says whether the window is looked at. The row's
// codes become 1 where a window was looked at and passed, else 0.
__global__ void skipRule(PyramidArgs a, int8_t* codes) {
  const LevelGeometry& g = a.geometry[blockIdx.y];
  const int lane = threadIdx.x % 32, row = blockIdx.x * kRowWarps + threadIdx.x / 32;
  if (row >= g.rows) return;  // whole warps
  int8_t* rowCodes = codes + g.codeOffset + static_cast<size_t>(row) * g.cols;
  // Whether the window at `lane` (32: the next run's first) is skipped, given the rejections of
  // this run and whether its first window is skipped.
  auto skipped = [](unsigned rejected, int lane, unsigned skippedFirst) {
    const unsigned before = lane == 32 ? ~0u : (1u << lane) - 1u, accepted = ~rejected & before;
    if (accepted == 0) return skippedFirst ^ (static_cast<unsigned>(lane) & 1u);  // rejections from the run's start
    return static_cast<unsigned>(lane - 1 - (31 - __clz(accepted))) & 1u;  // rejections since the last acceptance
  };
  unsigned skippedFirst = 0;
  for (int base = 0; base < g.cols; base += 32) {
    const int col = base + lane;
    const int8_t code = col < g.cols ? rowCodes[col] : 1;
    const unsigned rejected = __ballot_sync(0xFFFFFFFFu, code == 0);
    if (col < g.cols) rowCodes[col] = code == 1 && !skipped(rejected, lane, skippedFirst) ? 1 : 0;
    skippedFirst = skipped(rejected, 32, skippedFirst);
  }
}

}  // namespace

void launchFirstStage(const CascadeArgs& c, const PyramidArgs& a, int mostRows, int8_t* codes, float* norms,
                      cudaStream_t stream) {
  if (a.windowTiles == 0) return;  // no level fits a window
  size_t shared = sizeof(uint32_t) * tilePitch(c.windowWidth) * tileRows(c.windowHeight);
  allowSharedMemory(firstStage, shared, "face_detect's first stage");
  firstStage<<<a.windowTiles, kThreads, shared, stream>>>(c, a, codes, norms);
  PP_CUDA_CHECK_LAUNCH();
  skipRule<<<dim3((mostRows + kRowWarps - 1) / kRowWarps, a.levels), kRowWarps * 32, 0, stream>>>(a, codes);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
