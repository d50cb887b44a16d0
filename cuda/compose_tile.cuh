// The view on the device: each tile drawn into its place of the RGB8 canvas in one launch per tile
// (colours looked up for 8- and 16-bit planes, computed for float ones), face boxes outlined on the
// first tile.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/image_view.hpp"

namespace pp::compose {

constexpr int kMaxDrawnBoxes = 32;

struct DeviceTile {
  const uint8_t* data;
  size_t pitch;
  int width, height;
  int depth;     // 0 u8, 1 u16, 2 f32
  int channels;  // 1, 3 or 4
  int colormap;  // Colormap as int
  double max;
  const uint8_t* table;  // 8- and 16-bit planes: the RGB of every value (compose's colourTable); float: none
  int originX, originY;  // in the canvas
  int boxes;             // outlines to draw (first tile only)
  int boxX0[kMaxDrawnBoxes], boxY0[kMaxDrawnBoxes], boxX1[kMaxDrawnBoxes], boxY1[kMaxDrawnBoxes];
};

void launchDrawTile(const DeviceTile& tile, ImageView<uint8_t> canvas, cudaStream_t stream);

}  // namespace pp::compose
