// Device helpers of the cascade's kernels: which level and tile a block takes, the integral image
// of a tile's pixels in shared memory, and a stage's vote on a window from it.
#pragma once
#include "cuda/haar.cuh"

namespace pp::faces {

// The level holding tile `tile` of a launch over all levels (its index), and the tile's block
// position there.
__device__ __forceinline__ int levelOfTile(const PyramidArgs& a, int tile, bool windows, int& bx, int& by) {
  const int level = __ldg(&a.tileLevels[windows ? a.pixelTiles + tile : tile]);
  const LevelGeometry& g = a.geometry[level];
  int t = tile - (windows ? g.windowTile : g.pixelTile);
  int across = windows ? (g.cols + kWindowTileX - 1) / kWindowTileX : (g.width + kPixelTileX - 1) / kPixelTileX;
  bx = t % across, by = t / across;
  return level;
}

// A block's tile of window positions and the pixels its windows cover.
struct Tile {
  int level;
  const uint8_t* pixels;  // the level's image
  int levelWidth, cols, rows, step;
  size_t codeOffset;
  int col0, row0;     // the first window position
  int x0, y0;         // the first pixel
  int width, height;  // pixels covered
  int pitch;          // of the integral in shared memory
};

__device__ __forceinline__ Tile tileOf(const PyramidArgs& a, const CascadeArgs& c) {
  Tile t;
  int bx, by;
  t.level = levelOfTile(a, blockIdx.x, true, bx, by);
  const LevelGeometry& g = a.geometry[t.level];
  t.pixels = a.pixels + g.imageOffset;
  t.levelWidth = g.width, t.cols = g.cols, t.rows = g.rows, t.step = g.step, t.codeOffset = g.codeOffset;
  t.col0 = bx * kWindowTileX, t.row0 = by * kWindowTileY;
  t.x0 = t.col0 * t.step, t.y0 = t.row0 * t.step;
  t.width = min((kWindowTileX - 1) * t.step + c.windowWidth, g.width - t.x0);
  t.height = min((kWindowTileY - 1) * t.step + c.windowHeight, g.height - t.y0);
  t.pitch = tilePitch(c.windowWidth);
  return t;
}

// Window position p of the tile (kWindowTileX a row): whether the level has it, its index in the
// per-window buffers and its pixel offset in the tile.
struct TileWindow {
  bool valid;
  size_t index;
  int x, y;
};
__device__ __forceinline__ TileWindow tileWindow(const Tile& t, int p) {
  int col = t.col0 + p % kWindowTileX, row = t.row0 + p / kWindowTileX;
  return {col < t.cols && row < t.rows, t.codeOffset + static_cast<size_t>(row) * t.cols + col,
          (p % kWindowTileX) * t.step, (p / kWindowTileX) * t.step};
}

// A running sum along `n` values `stride` apart, kBatch at a time: a batch's loads do not wait on
// each other, so only its adds are in sequence (a value at a time would wait a load each).
__device__ __forceinline__ void runningSum(uint32_t* v, int n, int stride) {
  constexpr int kBatch = 8;
  uint32_t s = 0;
  int i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    uint32_t batch[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) batch[k] = v[(i + k) * stride];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) v[(i + k) * stride] = s += batch[k];
  }
  for (; i < n; ++i) v[i * stride] = s += v[i * stride];
}

// Rows r0, r0 + step, ... (kRows of them) of the tile's pixels (kSquares: squared) into rows
// r0 + 1, ... of `integral`, a lane a column: the rows' loads issued together so that they overlap.
// Rows past the tile's last load the last one again (their addresses stay inside the level, worked
// out once, not under a predicate) and store nothing.
template <int kRows, bool kSquares>
__device__ __forceinline__ void copyRows(uint32_t* integral, const Tile& t, int r0, int step, int lane) {
  const uint8_t* source[kRows];
  uint32_t* tile[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int r = min(r0 + k * step, t.height - 1);
    source[k] = t.pixels + static_cast<size_t>(t.y0 + r) * t.levelWidth + t.x0;
    tile[k] = integral + (r + 1) * t.pitch + 1;
  }
  for (int x = lane; x < t.width; x += 32) {
    uint32_t v[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) v[k] = source[k][x];
#pragma unroll
    for (int k = 0; k < kRows; ++k)
      if (r0 + k * step < t.height) tile[k][x] = kSquares ? v[k] * v[k] : v[k];
  }
}

// The integral (kSquares: of the squared pixels) of the tile's pixels into `integral`, row 0 and
// column 0 zero: the pixels copied in, a warp a row so the reads coalesce, then a thread sums each
// row and a thread each column. Unsigned, so the squares wrap as OpenCV's 32-bit squared integral
// does; a tile's sums stay far below 2^32 anyway.
template <bool kSquares> __device__ __forceinline__ void buildIntegral(uint32_t* integral, const Tile& t) {
  // A warp's rows loaded at once: with eight warps, a tile of a 24-pixel window in one pass at
  // window step 1 (39 rows), in two at step 2 (54); more take registers Orin's build spills.
  constexpr int kRows = 5;
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int x = threadIdx.x; x <= t.width; x += blockDim.x) integral[x] = 0;
  for (int r = 1 + threadIdx.x; r <= t.height; r += blockDim.x) integral[r * t.pitch] = 0;
  for (int r0 = threadIdx.x / 32; r0 < t.height; r0 += kRows * warps)
    copyRows<kRows, kSquares>(integral, t, r0, warps, lane);
  __syncthreads();
  for (int r = 1 + threadIdx.x; r <= t.height; r += blockDim.x) runningSum(integral + r * t.pitch + 1, t.width, 1);
  __syncthreads();
  for (int x = 1 + threadIdx.x; x <= t.width; x += blockDim.x) runningSum(integral + t.pitch + x, t.height, t.pitch);
  __syncthreads();
}

// The sum of a rectangle given by its four corners' byte offsets from `at` (top left, top right,
// bottom left, bottom right): bytes, so that each corner is one add and one load.
__device__ __forceinline__ int32_t rectSum(const uint32_t* at, int4 c) {
  const char* base = reinterpret_cast<const char*>(at);
  auto corner = [base](int offset) { return *reinterpret_cast<const uint32_t*>(base + offset); };
  return static_cast<int32_t>(corner(c.x) - corner(c.y) - corner(c.z) + corner(c.w));
}

// One stump's vote for the window whose top-left corner is `at` in a tile's integral: its
// feature (kRects rectangles), normalised, against the threshold. The float operations are
// OpenCV's, with rounding explicit so that nothing is fused.
template <int kRects>
__device__ __forceinline__ long long stumpVote(const GpuStump& s, const uint32_t* at, float norm) {
  const int4* corners = reinterpret_cast<const int4*>(s.corners);
  const float4 weights = __ldg(reinterpret_cast<const float4*>(s.weight));
  float value = __fadd_rn(__fmul_rn(weights.x, static_cast<float>(rectSum(at, __ldg(&corners[0])))),
                          __fmul_rn(weights.y, static_cast<float>(rectSum(at, __ldg(&corners[1])))));
  if constexpr (kRects == 3)
    value = __fadd_rn(value, __fmul_rn(weights.z, static_cast<float>(rectSum(at, __ldg(&corners[2])))));
  value = __fmul_rn(value, norm);
  const longlong2 leaves = __ldg(reinterpret_cast<const longlong2*>(&s.left));
  return value < weights.w ? leaves.x : leaves.y;
}

// The stumps of stage s that one of `lanes` threads takes on a window (lane, lane + lanes, ...),
// summed; integer sums, so the order in which the lanes' sums are added does not change them.
__device__ __forceinline__ long long stageSum(const CascadeArgs& c, int s, const uint32_t* at, float norm, int lane,
                                              int lanes) {
  const int4 range = __ldg(reinterpret_cast<const int4*>(&c.stages[s].first));  // first, count, twoRects
  long long total = 0;
  const GpuStump* stumps = c.stumps + range.x;  // each stump's address one multiply-add from it
  int k = lane;
#pragma unroll 1
  for (; k < range.z; k += lanes) total += stumpVote<2>(stumps[k], at, norm);
#pragma unroll 1
  for (; k < range.y; k += lanes) total += stumpVote<3>(stumps[k], at, norm);
  return total;
}

}  // namespace pp::faces
