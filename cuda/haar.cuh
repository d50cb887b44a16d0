// Haar-cascade detection on the GPU, in the steps of OpenCV's detectMultiScale: the pyramid
// (bit-exact bilinear resize of every level in one launch), integral and squared integral images
// (row then column prefix sums, every level at once), then the cascade: the first stage on every
// window, OpenCV's skip rule and a compaction of the windows that passed, then groups of later
// stages, each on the survivors of the one before (a thread per window for the short early stages,
// a warp per window, its lanes sharing a stage's stumps, for the long late ones). Stage and feature
// data stay in global memory behind the read-only cache (2913 stumps with their rects are 175 KB:
// more than constant memory holds).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace pp::faces {

constexpr int kMaxLevels = 64;

// A pyramid level in device buffers: its resized image (packed rows of `width`) and its integral
// images ((width + 1) x (height + 1), packed), and the bilinear tables of its resize.
// Launches over every level take a block per tile of kTileX x kTileY pixels or window positions,
// the levels' tiles one after another (only those that exist, where a grid of the largest level per
// level was mostly empty blocks).
constexpr int kTileX = 32, kTileY = 8;

struct LevelGeometry {
  float scale;
  int width, height, step;
  int cols, rows;              // window positions: x in [0, cols) and y in [0, rows), times step
  size_t imageOffset, integralOffset, codeOffset;  // into the pixel, integral and code buffers
  int tableX, tableY;          // offsets of the x and y tables (index, weight) into the table buffer
  int beforeX, afterX, beforeY, afterY;  // outside these, the first or last sample repeats
  int mode;                    // 0 copy, 1 bilinear, 2 area (exact halving)
  int pixelTile, windowTile;   // the level's first kTileX x kTileY tile of pixels / window positions in a launch over all levels
};

struct PyramidArgs {
  const uint8_t* source;  // the picture
  int sourceWidth, sourceHeight;
  size_t sourcePitch;
  int levels;
  const LevelGeometry* geometry;  // device copy
  const int2* tables;             // (index, weight in 1/256) per destination column / row
  uint8_t* pixels;
  int32_t* sums;
  uint32_t* squares;              // wraps like OpenCV's 32-bit squared integral
  int largestWidth, largestHeight;
  int pixelTiles, windowTiles;    // tiles of all levels together
};

#if defined(__CUDACC__)
// The level holding tile `tile` of a launch over all levels, and the tile's block position there.
__device__ __forceinline__ const LevelGeometry& levelOfTile(const PyramidArgs& a, int tile, bool windows, int& bx, int& by) {
  int lo = 0, hi = a.levels - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if ((windows ? a.geometry[mid].windowTile : a.geometry[mid].pixelTile) <= tile) lo = mid;
    else hi = mid - 1;
  }
  const LevelGeometry& g = a.geometry[lo];
  int t = tile - (windows ? g.windowTile : g.pixelTile), across = ((windows ? g.cols : g.width) + kTileX - 1) / kTileX;
  bx = t % across, by = t / across;
  return g;
}
#endif

struct GpuStump {
  float threshold, left, right;
  int rects;                      // 2 or 3
  int x[3], y[3], w[3], h[3];
  float weight[3];
};
struct GpuStage {
  int first, count;
  float threshold;
};

// A window that passed the stages so far; `norm` is its variance normalisation.
struct Candidate {
  uint16_t level, x, y;
  float norm;
};

struct CascadeArgs {
  const GpuStump* stumps;
  const GpuStage* stages;
  int windowWidth, windowHeight;
};

void launchPyramid(const PyramidArgs& a, cudaStream_t stream);

// Stage 0 on every window of every level: code -1 (flat window), 0 (rejected) or 1 (passed) and the
// variance normalisation per window position; then per row OpenCV's rule (after a rejection in
// stage 0 the next window is not looked at) and the windows that were looked at and passed into
// `out` (count in *outCount). cols x rows: the most window positions of any level.
void launchFirstStage(const CascadeArgs& c, const PyramidArgs& a, int cols, int rows, int8_t* codes, float* norms, Candidate* out, int* outCount, int capacity,
                      cudaStream_t stream);

// Stages [first, last) on the candidates in `in`, survivors into `out`: a thread per candidate
// (`byThread`: short stages, many candidates) or a warp (long stages, few candidates), `blocks` of
// 128 threads walking the list: stagesResidentBlocks(byThread), as many as stay resident.
int stagesResidentBlocks(bool byThread);
void launchStages(const CascadeArgs& c, const PyramidArgs& a, int first, int last, const Candidate* in, const int* inCount, Candidate* out, int* outCount,
                  int capacity, bool byThread, int blocks, cudaStream_t stream);

}  // namespace pp::faces
