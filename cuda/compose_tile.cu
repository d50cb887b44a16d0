#include "cuda/colormap.hpp"
#include "cuda/compose_tile.cuh"
#include "cuda/cuda_check.hpp"

namespace pp::compose {

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__device__ double sample(const DeviceTile& t, int x, int y, int c) {
  const uint8_t* row = t.data + static_cast<size_t>(y) * t.pitch;
  if (t.depth == 0) return row[x * t.channels + c];
  if (t.depth == 1) return reinterpret_cast<const uint16_t*>(row)[x * t.channels + c];
  return reinterpret_cast<const float*>(row)[x * t.channels + c];
}

// An 8- or 16-bit sample as an index into the tile's colour table.
__device__ int sampleIndex(const DeviceTile& t, int x, int y, int c) {
  const uint8_t* row = t.data + static_cast<size_t>(y) * t.pitch;
  return t.depth == 0 ? row[x * t.channels + c] : reinterpret_cast<const uint16_t*>(row)[x * t.channels + c];
}

// On a 2-pixel outline of a box, as drawBoxes draws it.
__device__ bool onOutline(const DeviceTile& t, int x, int y) {
  for (int i = 0; i < t.boxes; ++i) {
    int x0 = t.boxX0[i], y0 = t.boxY0[i], x1 = t.boxX1[i], y1 = t.boxY1[i];
    bool insideX = x >= x0 && x <= x1, insideY = y >= y0 && y <= y1;
    if (insideX && (y == y0 || y == y0 + 1 || y == y1 || y == y1 - 1)) return true;
    if (insideY && (x == x0 || x == x0 + 1 || x == x1 || x == x1 - 1)) return true;
  }
  return false;
}

__global__ void drawTile(DeviceTile t, ImageView<uint8_t> canvas) {
  int x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= t.width || y >= t.height) return;
  uint8_t rgb[3];
  if (t.boxes && onOutline(t, x, y)) {
    rgb[0] = 0, rgb[1] = 255, rgb[2] = 0;
  } else if (t.table && t.channels >= 3) {
    for (int c = 0; c < 3; ++c) rgb[c] = t.table[3 * sampleIndex(t, x, y, c)];
  } else if (t.table) {
    const uint8_t* entry = t.table + 3 * sampleIndex(t, x, y, 0);
    rgb[0] = entry[0], rgb[1] = entry[1], rgb[2] = entry[2];
  } else if (t.channels >= 3) {
    for (int c = 0; c < 3; ++c) rgb[c] = toByte(sample(t, x, y, c) / t.max);
  } else {
    double v = sample(t, x, y, 0) / t.max;
    if (!isfinite(v)) v = 0;
    if (t.colormap == 2)
      turboRgb(v, rgb);
    else if (t.colormap == 3)
      hueRgb(v, rgb);
    else
      rgb[0] = rgb[1] = rgb[2] = toByte(v);
  }
  uint8_t* out = canvas.row(t.originY + y) + 3 * (t.originX + x);
  out[0] = rgb[0], out[1] = rgb[1], out[2] = rgb[2];
}

}  // namespace

void launchDrawTile(const DeviceTile& tile, ImageView<uint8_t> canvas, cudaStream_t stream) {
  dim3 block(kBlockX, kBlockY), grid((tile.width + kBlockX - 1) / kBlockX, (tile.height + kBlockY - 1) / kBlockY);
  drawTile<<<grid, block, 0, stream>>>(tile, canvas);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::compose
