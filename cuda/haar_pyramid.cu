// The detection pyramid: every level resized from the picture in one launch (OpenCV's bit-exact
// bilinear resize, its area path for an exact halving, a copy at scale 1).
#include "cuda/cuda_check.hpp"
#include "cuda/haar_tile.cuh"

namespace pp::faces {

namespace {

// Column x's horizontal sample: the source column and its weight in 1/256 (of the next column), or
// weight -1 where the first or last column repeats.
__device__ __forceinline__ int2 columnSample(const PyramidArgs& a, const LevelGeometry& g, int x) {
  if (x < g.beforeX) return {0, -1};
  if (x >= g.afterX) return {a.sourceWidth - 1, -1};
  return a.tables[g.tableX + x];
}

__device__ __forceinline__ uint32_t horizontal(const PyramidArgs& a, int2 column, int sy) {
  const uint8_t* row = a.source + static_cast<size_t>(sy) * a.sourcePitch;
  if (column.y < 0) return static_cast<uint32_t>(row[column.x]) << 8;
  return row[column.x] * static_cast<uint32_t>(256 - column.y) + row[column.x + 1] * static_cast<uint32_t>(column.y);
}

// A block a tile, kThreadRows threads down it: each thread takes a column of the tile, every
// kThreadRows-th row, so that finding the level and reading its geometry is paid once for several
// pixels.
constexpr int kThreadRows = 8;

__global__ void resizeLevels(PyramidArgs a) {
  int bx, by;
  const LevelGeometry g = a.geometry[levelOfTile(a, blockIdx.x, false, bx, by)];
  const int x = bx * kPixelTileX + threadIdx.x, yEnd = min(g.height, (by + 1) * kPixelTileY);
  if (x >= g.width) return;
  const int2 column = g.mode == 1 ? columnSample(a, g, x) : int2{};
  for (int y = by * kPixelTileY + threadIdx.y; y < yEnd; y += kThreadRows) {
    uint8_t value;
    if (g.mode == 0) {
      value = a.source[static_cast<size_t>(y) * a.sourcePitch + x];
    } else if (g.mode == 2) {
      const uint8_t* r0 = a.source + static_cast<size_t>(2 * y) * a.sourcePitch + 2 * x;
      value = static_cast<uint8_t>((r0[0] + r0[1] + r0[a.sourcePitch] + r0[a.sourcePitch + 1] + 2) >> 2);
    } else if (y < g.beforeY || y >= g.afterY) {
      value = static_cast<uint8_t>((horizontal(a, column, y < g.beforeY ? 0 : a.sourceHeight - 1) + 128) >> 8);
    } else {
      int2 t = a.tables[g.tableY + y];
      uint32_t top = horizontal(a, column, t.x), bottom = horizontal(a, column, t.x + 1);
      value = static_cast<uint8_t>(
          (top * static_cast<uint32_t>(256 - t.y) + bottom * static_cast<uint32_t>(t.y) + (1u << 15)) >> 16);
    }
    a.pixels[g.imageOffset + static_cast<size_t>(y) * g.width + x] = value;
  }
}

}  // namespace

void launchPyramid(const PyramidArgs& a, cudaStream_t stream) {
  if (a.pixelTiles == 0) return;  // no levels
  resizeLevels<<<a.pixelTiles, dim3(kPixelTileX, kThreadRows), 0, stream>>>(a);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
