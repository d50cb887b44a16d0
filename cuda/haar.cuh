// Haar-cascade detection on the GPU, in the steps of OpenCV's detectMultiScale: the pyramid (every
// level resized bit-exactly in one launch), then the cascade on tiles of window positions. A block
// takes a tile, loads the pixels its windows cover and builds their integral image in shared
// memory, so every rectangle sum a window needs is read on chip: the first stage and the variance
// normalisation on every window, OpenCV's skip rule along each row, then the later stages on the
// tile's windows that passed, stage by stage, each window given as many lanes (sharing the
// stage's stumps) as the block has for the windows left: a thread a window early, up to a warp
// late. Integrals of a tile's own pixels give the same rectangle sums as the whole level's (the
// offsets cancel in the four-corner difference), so nothing is summed twice over the picture or
// stored in global memory. Stage and feature data stay in global memory behind the read-only
// cache (2913 stumps with their rects are 233 KB: more than constant memory holds).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace pp::faces {

constexpr int kMaxLevels = 256;  // a level's index fits the tile table's byte

// Tiles of a launch over every level, the levels' tiles one after another (only those that
// exist): the resize takes kPixelTileX x kPixelTileY pixels a block, the cascade kWindowTileX x
// kWindowTileY window positions.
constexpr int kPixelTileX = 32, kPixelTileY = 32;
constexpr int kWindowTileX = 32, kWindowTileY = 16;
constexpr int kMaxStep = 2;  // window step: 2 below scale 2, 1 above

// A pyramid level in device buffers: its resized image (packed rows of `width`) and the bilinear
// tables of its resize.
struct LevelGeometry {
  float scale;
  int width, height, step;
  int cols, rows;                        // window positions: x in [0, cols) and y in [0, rows), times step
  size_t imageOffset, codeOffset;        // into the pixel and per-window buffers
  int tableX, tableY;                    // offsets of the x and y tables (index, weight) into the table buffer
  int beforeX, afterX, beforeY, afterY;  // outside these, the first or last sample repeats
  int mode;                              // 0 copy, 1 bilinear, 2 area (exact halving)
  int pixelTile, windowTile;  // the level's first tile of pixels / of window positions in a launch over all levels
};

struct PyramidArgs {
  const uint8_t* source;  // the picture
  int sourceWidth, sourceHeight;
  size_t sourcePitch;
  int levels;
  const LevelGeometry* geometry;  // device copy
  const int2* tables;             // (index, weight in 1/256) per destination column / row
  const uint8_t* tileLevels;      // the level of each tile: every pixel tile's, then every window tile's
  uint8_t* pixels;
  int pixelTiles, windowTiles;  // tiles of all levels together
};

// The integral of a tile in shared memory: (kWindowTileX - 1) * step + window pixels across, plus
// the zero column; an odd pitch, so that threads summing one row each hit different banks.
constexpr int tilePitch(int windowWidth) { return ((kWindowTileX - 1) * kMaxStep + windowWidth + 1) | 1; }
constexpr int tileRows(int windowHeight) { return (kWindowTileY - 1) * kMaxStep + windowHeight + 1; }

// A stump, laid out for five 16-byte loads: each rectangle's four corners (top left, top right,
// bottom left, bottom right) as byte offsets in a tile's integral from the window's top-left corner,
// the rectangles' weights (a third of 0: two rectangles), the feature's threshold, and the two leaf
// values in the cascade's fixed point (a stage's double sum of floats is exact for OpenCV's
// cascades, so 64-bit integers give the same sums in any order, without the double unit Jetsons
// barely have).
struct alignas(16) GpuStump {
  int corners[3][4];
  float weight[3];
  float threshold;
  long long left, right;
};
// A stage's stumps: `count` from `first`, those whose feature has two rectangles (`twoRects` of
// them) first, so that each kind runs a loop of its own (their integer sums do not depend on the
// order).
struct alignas(16) GpuStage {
  int first, count, twoRects, unused;
  long long threshold;  // fixed point
};

// A window that passed every stage; `norm` is its variance normalisation.
struct Candidate {
  uint16_t level, x, y;
  float norm;
};

struct CascadeArgs {
  const GpuStump* stumps;
  const GpuStage* stages;
  int stageCount;
  int windowWidth, windowHeight;
};

void launchPyramid(const PyramidArgs& a, cudaStream_t stream);

// Stage 0 on every window of every level: code -1 (flat window), 0 (rejected) or 1 (passed) and
// the variance normalisation per window position; then per row OpenCV's rule (after a rejection in
// stage 0 the next window is not looked at), leaving 1 in `codes` where a window was looked at and
// passed. `mostRows`: the most rows of window positions a level has.
void launchFirstStage(const CascadeArgs& c, const PyramidArgs& a, int mostRows, int8_t* codes, float* norms,
                      cudaStream_t stream);

// The later stages on every window `codes` marks, tile by tile; the windows that pass them all go
// to `out` (count in *outCount, at most `capacity` stored).
void launchLaterStages(const CascadeArgs& c, const PyramidArgs& a, const int8_t* codes, const float* norms,
                       Candidate* out, int* outCount, int capacity, cudaStream_t stream);

}  // namespace pp::faces
