// The detection pyramid: every level resized from the picture in one launch (OpenCV's bit-exact
// bilinear resize, its area path for an exact halving, a copy at scale 1).
#include "cuda/cuda_check.hpp"
#include "cuda/haar_tile.cuh"

namespace pp::faces {

namespace {

__device__ __forceinline__ uint32_t horizontal(const PyramidArgs& a, const LevelGeometry& g, int x, int sy) {
  const uint8_t* row = a.source + static_cast<size_t>(sy) * a.sourcePitch;
  if (x < g.beforeX) return static_cast<uint32_t>(row[0]) << 8;
  if (x >= g.afterX) return static_cast<uint32_t>(row[a.sourceWidth - 1]) << 8;
  int2 t = a.tables[g.tableX + x];
  return row[t.x] * static_cast<uint32_t>(256 - t.y) + row[t.x + 1] * static_cast<uint32_t>(t.y);
}

__global__ void resizeLevels(PyramidArgs a) {
  int bx, by;
  const LevelGeometry g = a.geometry[levelOfTile(a, blockIdx.x, false, bx, by)];
  int x = bx * kPixelTileX + threadIdx.x, y = by * kPixelTileY + threadIdx.y;
  if (x >= g.width || y >= g.height) return;
  uint8_t value;
  if (g.mode == 0) {
    value = a.source[static_cast<size_t>(y) * a.sourcePitch + x];
  } else if (g.mode == 2) {
    const uint8_t* r0 = a.source + static_cast<size_t>(2 * y) * a.sourcePitch + 2 * x;
    value = static_cast<uint8_t>((r0[0] + r0[1] + r0[a.sourcePitch] + r0[a.sourcePitch + 1] + 2) >> 2);
  } else if (y < g.beforeY || y >= g.afterY) {
    value = static_cast<uint8_t>((horizontal(a, g, x, y < g.beforeY ? 0 : a.sourceHeight - 1) + 128) >> 8);
  } else {
    int2 t = a.tables[g.tableY + y];
    uint32_t top = horizontal(a, g, x, t.x), bottom = horizontal(a, g, x, t.x + 1);
    value = static_cast<uint8_t>(
        (top * static_cast<uint32_t>(256 - t.y) + bottom * static_cast<uint32_t>(t.y) + (1u << 15)) >> 16);
  }
  a.pixels[g.imageOffset + static_cast<size_t>(y) * g.width + x] = value;
}

}  // namespace

void launchPyramid(const PyramidArgs& a, cudaStream_t stream) {
  if (a.pixelTiles == 0) return;  // no levels
  resizeLevels<<<a.pixelTiles, dim3(kPixelTileX, kPixelTileY), 0, stream>>>(a);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
