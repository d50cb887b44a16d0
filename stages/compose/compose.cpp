#include "stages/compose/compose.hpp"

#include "cuda/colormap.hpp"
#if POLARPIPE_HAS_CUDA
#include "cuda/compose_tile.cuh"
#include "pipeline/device_buffer.hpp"
#endif

#include <algorithm>
#include <cmath>

namespace pp::compose {

int tileCount(Layout layout) { return layout == Layout::single ? 1 : layout == Layout::side_by_side ? 2 : 4; }
int columns(Layout layout) { return layout == Layout::single ? 1 : 2; }

namespace {
double fullRange(Depth d) { return d == Depth::u8 ? 255.0 : d == Depth::u16 ? 65535.0 : 1.0; }
}  // namespace

std::array<uint8_t, 3> turbo(double t) {
  std::array<uint8_t, 3> rgb;
  turboRgb(t, rgb.data());
  return rgb;
}

std::array<uint8_t, 3> hue(double t) {
  std::array<uint8_t, 3> rgb;
  hueRgb(t, rgb.data());
  return rgb;
}

namespace {
// A single channel's value through the style's map.
std::array<uint8_t, 3> mapped(double value, double max, Colormap colormap) {
  double t = value / max;
  if (!std::isfinite(t)) t = 0;  // invalid depth or disparity shows black
  if (colormap == Colormap::turbo) return turbo(t);
  if (colormap == Colormap::hsv) return hue(t);
  uint8_t grey = toByte(t);
  return {grey, grey, grey};
}
}  // namespace

void drawTile(const Image& src, const TileStyle& style, ImageView<uint8_t> dst) {
  int channels = src.format().channels;
  double max = style.max > 0 ? style.max : fullRange(src.format().depth);
  for (int y = 0; y < src.height(); ++y)
    for (int x = 0; x < src.width(); ++x) {
      std::array<uint8_t, 3> rgb;
      if (channels >= 3) {
        for (int c = 0; c < 3; ++c) rgb[static_cast<size_t>(c)] = toByte(sampleAt(src, x, y, c) / max);
      } else {
        rgb = mapped(sampleAt(src, x, y, 0), max, style.colormap);
      }
      for (int c = 0; c < 3; ++c) dst.at(x, y, c) = rgb[static_cast<size_t>(c)];
    }
}

std::vector<uint8_t> colourTable(Depth depth, int channels, const TileStyle& style) {
  if (depth == Depth::f32) throw std::invalid_argument("compose: no colour table for float planes");
  double max = style.max > 0 ? style.max : fullRange(depth);
  size_t values = depth == Depth::u8 ? 256 : 65536;
  std::vector<uint8_t> table(values * 3);
  for (size_t v = 0; v < values; ++v) {
    std::array<uint8_t, 3> rgb;
    if (channels >= 3)
      rgb.fill(toByte(static_cast<double>(v) / max));
    else
      rgb = mapped(static_cast<double>(v), max, style.colormap);
    std::copy(rgb.begin(), rgb.end(), table.begin() + static_cast<std::ptrdiff_t>(3 * v));
  }
  return table;
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

void composeCpu(const std::vector<const Image*>& tiles, const std::vector<TileStyle>& styles, Layout layout,
                const Detections* boxes, Image& out) {
  ImageView<uint8_t> canvas = out.view<uint8_t>();
  int cols = columns(layout);
  for (size_t i = 0; i < tiles.size(); ++i) {
    const Image& tile = *tiles[i];
    int ox = static_cast<int>(i) % cols * tile.width(), oy = static_cast<int>(i) / cols * tile.height();
    ImageView<uint8_t> region{
        canvas.row(oy) + static_cast<size_t>(ox) * 3, tile.width(), tile.height(), canvas.pitch, 3, canvas.memory};
    drawTile(tile, styles[i], region);
    if (styles[i].boxes && boxes) drawBoxes(region, *boxes);
  }
}

#if POLARPIPE_HAS_CUDA
// Each tile's colour table, kept while its plane's kind and style stay the same.
struct ComposerCuda::State {
  struct Table {
    Depth depth;
    int channels;
    Colormap colormap;
    double max;
    DeviceBuffer<uint8_t> rgb;
  };
  std::vector<Table> tables;
};

ComposerCuda::ComposerCuda() : state_(std::make_unique<State>()) {}
ComposerCuda::~ComposerCuda() = default;

void ComposerCuda::compose(const std::vector<const Image*>& tiles, const std::vector<TileStyle>& styles, Layout layout,
                           const Detections* boxes, Image& out, StreamHandle stream) {
  int cols = columns(layout);
  state_->tables.resize(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    const Image& tile = *tiles[i];
    Depth depth = tile.format().depth;
    int channels = tile.format().channels;
    State::Table& table = state_->tables[i];
    if (depth != Depth::f32 && (!table.rgb.get() || table.depth != depth || table.channels != channels ||
                                table.colormap != styles[i].colormap || table.max != styles[i].max)) {
      std::vector<uint8_t> host = colourTable(depth, channels, styles[i]);
      // The table replaced may still be read by draws queued earlier on this stream.
      if (table.rgb.get()) PP_CUDA_CHECK(cudaStreamSynchronize(stream));
      table = {depth, channels, styles[i].colormap, styles[i].max, DeviceBuffer<uint8_t>(host.size())};
      PP_CUDA_CHECK(cudaMemcpyAsync(table.rgb.get(), host.data(), host.size(), cudaMemcpyHostToDevice, stream));
    }
    DeviceTile t{static_cast<const uint8_t*>(tile.data()),
                 tile.pitch(),
                 tile.width(),
                 tile.height(),
                 depth == Depth::u8    ? 0
                 : depth == Depth::u16 ? 1
                                       : 2,
                 channels,
                 static_cast<int>(styles[i].colormap),
                 styles[i].max > 0 ? styles[i].max : fullRange(depth),
                 depth == Depth::f32 ? nullptr : table.rgb.get(),
                 static_cast<int>(i) % cols * tile.width(),
                 static_cast<int>(i) / cols * tile.height(),
                 0,
                 {},
                 {},
                 {},
                 {}};
    if (styles[i].boxes && boxes)
      for (const Box& b : *boxes) {
        if (t.boxes == kMaxDrawnBoxes) break;
        t.boxX0[t.boxes] = static_cast<int>(std::lround(b.x)), t.boxY0[t.boxes] = static_cast<int>(std::lround(b.y));
        t.boxX1[t.boxes] = static_cast<int>(std::lround(b.x + b.w)) - 1,
        t.boxY1[t.boxes] = static_cast<int>(std::lround(b.y + b.h)) - 1;
        ++t.boxes;
      }
    launchDrawTile(t, out.view<uint8_t>(), stream);
  }
}
#else
struct ComposerCuda::State {};
ComposerCuda::ComposerCuda() = default;
ComposerCuda::~ComposerCuda() = default;
void ComposerCuda::compose(const std::vector<const Image*>&, const std::vector<TileStyle>&, Layout, const Detections*,
                           Image&, StreamHandle) {
  throw std::logic_error("compose: this build has no CUDA");
}
#endif

}  // namespace pp::compose
