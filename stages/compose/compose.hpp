// compose: the view sent to the sinks. Tiles of any plane, colour-mapped (turbo for disparity
// and depth, HSV for angles), laid out single, side by side or 2x2, with face boxes drawn.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/node.hpp"

namespace pp::compose {

enum class Colormap { none, gray, turbo, hsv };
enum class Layout { single, side_by_side, grid2x2 };

struct TileStyle {
  Colormap colormap = Colormap::none;
  double max = 0;      // value drawn at the top of the map; 0: the depth's full range (255, 65535, 1.0)
  bool boxes = false;  // the boxes are drawn on this tile
};

int tileCount(Layout layout);
int columns(Layout layout);

// Turbo (Mikhailov 2019, polynomial fit) and HSV hue of t in [0, 1], as RGB8.
std::array<uint8_t, 3> turbo(double t);
std::array<uint8_t, 3> hue(double t);

// Draws `src` (1 channel any depth, or 3/4-channel u8) into the RGB8 view `dst` of the same size.
void drawTile(const Image& src, const TileStyle& style, ImageView<uint8_t> dst);
// Rectangle outlines, 2 px wide, clipped to the view; box coordinates in the view's pixels.
void drawBoxes(ImageView<uint8_t> dst, const Detections& boxes, std::array<uint8_t, 3> colour = {0, 255, 0});

// Lays out up to four tiles into `out` (RGB8, columns x rows tiles of the tiles' size).
void composeCpu(const std::vector<const Image*>& tiles, const std::vector<TileStyle>& styles, Layout layout,
                const Detections* boxes, Image& out);
// The colour drawTile gives each value of an 8- or 16-bit plane of `channels` (a single channel
// through the style's map; each channel of a colour tile grey): 256 or 65536 RGB triples.
std::vector<uint8_t> colourTable(Depth depth, int channels, const TileStyle& style);

// The same as composeCpu on the device (tiles and `out` in device memory; at most 32 boxes drawn),
// on `stream`. 8- and 16-bit tiles look their colours up in colourTable, made on the host once per
// tile (so they equal the CPU's, and no pixel needs the double arithmetic a Jetson's FP64 units are
// slow at); float tiles are computed.
class ComposerCuda {
 public:
  ComposerCuda();
  ~ComposerCuda();
  void compose(const std::vector<const Image*>& tiles, const std::vector<TileStyle>& styles, Layout layout,
               const Detections* boxes, Image& out, StreamHandle stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace pp::compose
