#include "stages/compose/compose.hpp"

#include <algorithm>
#include <cmath>

namespace pp::compose {

int tileCount(Layout layout) { return layout == Layout::single ? 1 : layout == Layout::side_by_side ? 2 : 4; }
int columns(Layout layout) { return layout == Layout::single ? 1 : 2; }

namespace {
uint8_t toByte(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); }

double fullRange(Depth d) { return d == Depth::u8 ? 255.0 : d == Depth::u16 ? 65535.0 : 1.0; }

}  // namespace

std::array<uint8_t, 3> turbo(double t) {
  t = std::clamp(t, 0.0, 1.0);
  double r = 0.13572138 + t * (4.61539260 + t * (-42.66032258 + t * (132.13108234 + t * (-152.94239396 + t * 59.28637943))));
  double g = 0.09140261 + t * (2.19418839 + t * (4.84296658 + t * (-14.18503333 + t * (4.27729857 + t * 2.82956604))));
  double b = 0.10667330 + t * (12.64194608 + t * (-60.58204836 + t * (110.36276771 + t * (-89.90310912 + t * 27.34824973))));
  return {toByte(r), toByte(g), toByte(b)};
}

std::array<uint8_t, 3> hue(double t) {
  double h = (t - std::floor(t)) * 6.0;
  double f = h - std::floor(h);
  switch (static_cast<int>(h) % 6) {
    case 0: return {255, toByte(f), 0};
    case 1: return {toByte(1 - f), 255, 0};
    case 2: return {0, 255, toByte(f)};
    case 3: return {0, toByte(1 - f), 255};
    case 4: return {toByte(f), 0, 255};
    default: return {255, 0, toByte(1 - f)};
  }
}

void drawTile(const Image& src, const TileStyle& style, ImageView<uint8_t> dst) {
  int channels = src.format().channels;
  double max = style.max > 0 ? style.max : fullRange(src.format().depth);
  for (int y = 0; y < src.height(); ++y)
    for (int x = 0; x < src.width(); ++x) {
      std::array<uint8_t, 3> rgb;
      if (channels >= 3) {
        for (int c = 0; c < 3; ++c) rgb[static_cast<size_t>(c)] = toByte(sampleAt(src, x, y, c) / max);
      } else {
        double t = sampleAt(src, x, y, 0) / max;
        if (!std::isfinite(t)) t = 0;  // invalid depth or disparity shows black
        if (style.colormap == Colormap::turbo) rgb = turbo(t);
        else if (style.colormap == Colormap::hsv) rgb = hue(t);
        else rgb.fill(toByte(t));
      }
      for (int c = 0; c < 3; ++c) dst.at(x, y, c) = rgb[static_cast<size_t>(c)];
    }
}

void drawBoxes(ImageView<uint8_t> dst, const Detections& boxes, std::array<uint8_t, 3> colour) {
  auto put = [&](int x, int y) {
    if (x < 0 || y < 0 || x >= dst.width || y >= dst.height) return;
    for (int c = 0; c < 3; ++c) dst.at(x, y, c) = colour[static_cast<size_t>(c)];
  };
  for (const Box& b : boxes) {
    int x0 = static_cast<int>(std::lround(b.x)), y0 = static_cast<int>(std::lround(b.y));
    int x1 = static_cast<int>(std::lround(b.x + b.w)) - 1, y1 = static_cast<int>(std::lround(b.y + b.h)) - 1;
    for (int t = 0; t < 2; ++t) {
      for (int x = x0; x <= x1; ++x) put(x, y0 + t), put(x, y1 - t);
      for (int y = y0; y <= y1; ++y) put(x0 + t, y), put(x1 - t, y);
    }
  }
}

void composeCpu(const std::vector<const Image*>& tiles, const std::vector<TileStyle>& styles, Layout layout, const Detections* boxes, Image& out) {
  ImageView<uint8_t> canvas = out.view<uint8_t>();
  int cols = columns(layout);
  for (size_t i = 0; i < tiles.size(); ++i) {
    const Image& tile = *tiles[i];
    int ox = static_cast<int>(i) % cols * tile.width(), oy = static_cast<int>(i) / cols * tile.height();
    ImageView<uint8_t> region{canvas.row(oy) + static_cast<size_t>(ox) * 3, tile.width(), tile.height(), canvas.pitch, 3, canvas.memory};
    drawTile(tile, styles[i], region);
    if (i == 0 && boxes) drawBoxes(region, *boxes);
  }
}

}  // namespace pp::compose
