#include "stages/demosaic/synth.hpp"

#include <algorithm>
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
  const Image* glass = o.reflection;
  if (glass && (glass->format().depth != Depth::u8 || (glass->format().channels != 1 && glass->format().channels < 3)))
    throw std::invalid_argument("the reflection must be an 8-bit grey or colour picture, got " +
                                toString(glass->format()));
  double a = glass ? o.reflectionStrength : 0;
  double scale = o.sixteenBit ? 257.0 : 1.0;
  int channels = colour ? 3 : 1;
  Depth depth = o.sixteenBit ? Depth::u16 : Depth::u8;

  SynthFrame f;
  f.raw = Image({depth, 1}, 2 * w, 2 * h, MemoryKind::host);
  for (auto& a : f.angle) a = Image({depth, channels}, w, h, MemoryKind::host);
  f.s0 = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  f.dolp = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  f.aolp = Image({Depth::f32, 1}, w, h, MemoryKind::host);
  // Channel c of an 8-bit picture at (x, y): its own for colour, else grey (luma of a colour one).
  auto sample = [&](const Image& img, int x, int y, int c) -> double {
    auto v = img.view<uint8_t>();
    if (img.format().channels == 1) return v.at(x, y);
    if (colour) return v.at(x, y, c);
    return 0.299 * v.at(x, y, 0) + 0.587 * v.at(x, y, 1) + 0.114 * v.at(x, y, 2);
  };
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
      double base[3], mirrored[3] = {}, luma = 0;
      for (int c = 0; c < channels; ++c) {
        base[c] = 0.5 * sample(picture, x, y, c) * scale;  // S0 / 2: I(theta) peaks at 2 * base, within range
        if (glass) mirrored[c] = 0.5 * sample(*glass, x % glass->width(), y % glass->height(), c) * scale;
        luma += (colour ? polar::lumaWeight(c) : 1.0) * base[c];
      }
      double I[4][3];  // what each angle sees, per channel
      for (int k = 0; k < 4; ++k) {
        double theta = polar::kAngles[k] * M_PI / 180.0;
        double factor = 1 + rho * std::cos(2 * (theta - phi));
        for (int c = 0; c < channels; ++c)
          I[k][c] = glass
                        ? (1 - a) * base[c] * factor + a * mirrored[c] * (1 + std::cos(2 * (theta - o.reflectionAolp)))
                        : base[c] * factor;
      }
      if (glass) {  // the truth of what reaches the sensor: the (luminance) Stokes of the four angles
        double s[3] = {};
        for (int c = 0; c < channels; ++c) {
          double w = colour ? polar::lumaWeight(c) : 1.0;
          s[0] += w * (I[0][c] + I[1][c] + I[2][c] + I[3][c]) / 2, s[1] += w * (I[0][c] - I[2][c]),
              s[2] += w * (I[1][c] - I[3][c]);
        }
        luma = s[0] / 2;
        rho = s[0] > 0 ? std::min(1.0, std::hypot(s[1], s[2]) / s[0]) : 0;
        phi = std::fmod(0.5 * std::atan2(s[2], s[1]) + M_PI, M_PI);
      }
      f.s0.view<float>().at(x, y) = static_cast<float>(2 * luma);
      f.dolp.view<float>().at(x, y) = static_cast<float>(rho);
      f.aolp.view<float>().at(x, y) = static_cast<float>(phi);
      for (int k = 0; k < 4; ++k) {
        for (int c = 0; c < channels; ++c) put(f.angle[k], x, y, c, std::lround(I[k][c]));
        int ox = 0, oy = 0;
        o.layout.offsetOf(k, ox, oy);
        int c = colour ? o.layout.colour(x, y) : 0;
        put(f.raw, 2 * x + ox, 2 * y + oy, 0, std::lround(I[k][c]));
      }
    }
  return f;
}

}  // namespace pp::demosaic
