#include "stages/demosaic/synth.hpp"

#include <cmath>

namespace pp::demosaic {

namespace {

double parseNumber(const std::string& text, const char* what) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size())
    throw std::invalid_argument(std::string(what) + " '" + text + "': expected ramp" +
                                (std::string(what) == "aolp" ? ", radial" : "") + " or a number");
  return v;
}

}  // namespace

SynthFrame synthesize(const Image& picture, const SynthOptions& o) {
  if (picture.format().depth != Depth::u8 || (picture.format().channels != 1 && picture.format().channels < 3))
    throw std::invalid_argument("synth needs an 8-bit grey or colour picture, got " + toString(picture.format()));
  bool colour = o.mosaic == Mosaic::rggb;
  if (colour && picture.format().channels < 3) throw std::invalid_argument("polar_rggb needs a colour picture");
  int w = picture.width(), h = picture.height();
  if (colour && (w % 2 || h % 2)) w -= w % 2, h -= h % 2;  // whole 4x4 colour periods
  double constantAolp = o.aolp == "ramp" || o.aolp == "radial" ? 0 : parseNumber(o.aolp, "aolp") * M_PI / 180.0;
  double constantDolp = o.dolp == "ramp" ? 0 : parseNumber(o.dolp, "dolp");
  if (o.dolp != "ramp" && (constantDolp < 0 || constantDolp > 1))
    throw std::invalid_argument("dolp " + o.dolp + " is outside [0, 1]");
  double scale = o.sixteenBit ? 257.0 : 1.0;
  int channels = colour ? 3 : 1;
  Depth depth = o.sixteenBit ? Depth::u16 : Depth::u8;

  SynthFrame f;
  f.raw = Image({depth, 1}, 2 * w, 2 * h, MemoryKind::host);
  for (auto& a : f.angle) a = Image({depth, channels}, w, h, MemoryKind::host);
  f.s0 = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  f.dolp = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  f.aolp = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  auto pic = picture.view<uint8_t>();
  auto put = [&](Image& img, int x, int y, int c, long v) {
    if (depth == Depth::u8)
      img.view<uint8_t>().at(x, y, c) = static_cast<uint8_t>(v);
    else
      img.view<uint16_t>().at(x, y, c) = static_cast<uint16_t>(v);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double phi = o.aolp == "ramp"     ? M_PI * (x + 0.5) / w
                   : o.aolp == "radial" ? std::atan2(y + 0.5 - h / 2.0, x + 0.5 - w / 2.0)
                                        : constantAolp;
      phi = std::fmod(phi + o.aolpOffset, M_PI);
      if (phi < 0) phi += M_PI;
      double rho = o.dolp == "ramp" ? 0.1 + 0.8 * (y + 0.5) / h : constantDolp;
      double base[3], luma = 0;
      for (int c = 0; c < channels; ++c) {
        double v = colour ? pic.at(x, y, c)
                   : picture.format().channels == 1
                       ? pic.at(x, y)
                       : 0.299 * pic.at(x, y, 0) + 0.587 * pic.at(x, y, 1) + 0.114 * pic.at(x, y, 2);
        base[c] = 0.5 * v * scale;  // S0 / 2: I(theta) peaks at 2 * base, within range
        luma += (colour ? polar::lumaWeight(c) : 1.0) * base[c];
      }
      f.s0.view<float>().at(x, y) = static_cast<float>(2 * luma);
      f.dolp.view<float>().at(x, y) = static_cast<float>(rho);
      f.aolp.view<float>().at(x, y) = static_cast<float>(phi);
      for (int k = 0; k < 4; ++k) {
        double theta = polar::kAngles[k] * M_PI / 180.0;
        double factor = 1 + rho * std::cos(2 * (theta - phi));
        for (int c = 0; c < channels; ++c) put(f.angle[k], x, y, c, std::lround(base[c] * factor));
        int ox = 0, oy = 0;
        o.layout.offsetOf(k, ox, oy);
        int c = colour ? o.layout.colour(x, y) : 0;
        put(f.raw, 2 * x + ox, 2 * y + oy, 0, std::lround(base[c] * factor));
      }
    }
  return f;
}

}  // namespace pp::demosaic
