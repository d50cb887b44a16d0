// The reference: separate each angle's sub-image, demosaic it, then compute Stokes per pixel.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

using namespace polar;

namespace {

// One angle's samples at half resolution: sub(x, y) = raw(2x + ox, 2y + oy).
struct SubImage {
  int width, height;
  std::vector<int> v;
  int at(int x, int y) const { return v[static_cast<size_t>(reflect101(y, height)) * width + reflect101(x, width)]; }
};

SubImage extract(const Settings& s, ImageView<const uint8_t> raw, int rawWidth, int k) {
  int ox = 0, oy = 0;
  s.layout.offsetOf(k, ox, oy);
  SubImage sub{rawWidth / 2, raw.height / 2, {}};
  for (int y = 0; y < sub.height; ++y)
    for (int x = 0; x < sub.width; ++x) sub.v.push_back(sampleOf(raw, s, 2 * x + ox, 2 * y + oy));
  return sub;
}

int convolve(const SubImage& sub, int x, int y, const int (&kernel)[5][5]) {
  int sum = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) sum += kernel[dy + 2][dx + 2] * sub.at(x + dx, y + dy);
  return sum;
}

// Malvar-He-Cutler at one pixel of a Bayer sub-image.
void mhc(const Settings& s, const SubImage& sub, int x, int y, int rgb[3]) {
  int maxv = sampleMax(s);
  int here = s.layout.colour(x, y);
  rgb[here] = sub.at(x, y);
  if (here == G) {
    int rowColour = s.layout.colour(x + 1, y);  // red or blue: the colour beside it in this row
    int colColour = s.layout.colour(x, y + 1);
    rgb[rowColour] = mhcResult(convolve(sub, x, y, kMhcH), maxv);
    rgb[colColour] = mhcResult(convolve(sub, x, y, kMhcV), maxv);
  } else {
    rgb[G] = mhcResult(convolve(sub, x, y, kMhcG), maxv);
    rgb[here == R ? B : R] = mhcResult(convolve(sub, x, y, kMhcD), maxv);
  }
}

// Full-resolution value of angle k at raw pixel (x, y): the mean of its nearest samples
// (1, 2 or 4 of them), rounded.
int bilinear(const SubImage& sub, int ox, int oy, int x, int y) {
  int sx = x - ox, sy = y - oy;
  int x0 = sx >> 1, y0 = sy >> 1;  // floor
  int x1 = (sx & 1) ? x0 + 1 : x0, y1 = (sy & 1) ? y0 + 1 : y0;
  int n = (x1 != x0 ? 2 : 1) * (y1 != y0 ? 2 : 1);
  int sum = sub.at(x0, y0) + (x1 != x0 ? sub.at(x1, y0) : 0) + (y1 != y0 ? sub.at(x0, y1) : 0) +
            (n == 4 ? sub.at(x1, y1) : 0);
  return (sum + n / 2) / n;
}

template <class T> void store(const ImageView<T>& v, int x, int y, int c, T value) {
  if (!v.empty()) v.at(x, y, c) = value;
}
void storef(const ImageView<float>& v, int x, int y, int c, float value) {
  if (!v.empty()) v.at(x, y, c) = value;
}

}  // namespace

template <class T>
void demosaicCpu(const Settings& s, ImageView<const uint8_t> raw, int rawWidth, const Planes<T>& out) {
  SubImage sub[4] = {extract(s, raw, rawWidth, 0), extract(s, raw, rawWidth, 1), extract(s, raw, rawWidth, 2),
                     extract(s, raw, rawWidth, 3)};
  bool colour = s.mosaic == Mosaic::rggb;
  int channels = colour ? 3 : 1;
  int width = s.fullResolution ? rawWidth : rawWidth / 2, height = s.fullResolution ? raw.height : raw.height / 2;
  float maxv = static_cast<float>(sampleMax(s));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      int value[4][3];  // [angle][channel]
      for (int k = 0; k < 4; ++k) {
        if (colour) {
          mhc(s, sub[k], x, y, value[k]);
        } else if (s.fullResolution) {
          int ox = 0, oy = 0;
          s.layout.offsetOf(k, ox, oy);
          value[k][0] = bilinear(sub[k], ox, oy, x, y);
        } else {
          value[k][0] = sub[k].at(x, y);
        }
      }
      Stokes luma{0, 0, 0};
      for (int c = 0; c < channels; ++c) {
        for (int k = 0; k < 4; ++k) store(out.angle[k], x, y, c, static_cast<T>(value[k][c]));
        store(out.s0, x, y, c, static_cast<T>((value[0][c] + value[1][c] + value[2][c] + value[3][c] + 2) >> 2));
        Stokes st = stokes(static_cast<float>(value[0][c]), static_cast<float>(value[1][c]),
                           static_cast<float>(value[2][c]), static_cast<float>(value[3][c]));
        storef(out.s1, x, y, c, st.s1);
        storef(out.s2, x, y, c, st.s2);
        if (out.wantsFiltered()) {
          Passed passed =
              polarizersPass(stokesSums(value[0][c], value[1][c], value[2][c], value[3][c]), s, sampleMax(s));
          store(out.minimum, x, y, c, static_cast<T>(passed.least));
          store(out.maximum, x, y, c, static_cast<T>(passed.most));
          store(out.polarizer, x, y, c, static_cast<T>(passed.at));
        }
        addToLuma(luma, st, colour ? lumaWeight(c) : 1.f);
      }
      storePolarization(out, s, x, y, luma, maxv);
    }
}

template void demosaicCpu<uint8_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint8_t>&);
template void demosaicCpu<uint16_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint16_t>&);

const std::vector<std::pair<std::string, std::string>>& outputMeanings() {
  static const std::vector<std::pair<std::string, std::string>> meanings = {
      {"angles", "angle_0 .. angle_135: what a polarizer at each of the sensor's angles saw (the samples' range)"},
      {"s0", "S0 / 2: the intensity, what a camera without polarizers sees (the samples' range)"},
      {"s1", "S1 = I0 - I90 (f32): polarized along the rows (> 0) or the columns (< 0)"},
      {"s2", "S2 = I45 - I135 (f32): polarized along one diagonal or the other"},
      {"dolp", "sqrt(S1^2 + S2^2) / S0 (f32, 0..1): how much of the light is linearly polarized"},
      {"aolp", "atan2(S2, S1) / 2 (f32, radians 0..pi): the angle it is polarized at, from the rows"},
      {"aolp_visual", "RGB: hue AoLP, saturation DoLP, value S0"},
      {"min",
       "(S0 - sqrt(S1^2 + S2^2)) / 2: the best polarizer angle at each pixel; reflections off glass, water "
       "and paint suppressed"},
      {"max", "(S0 + sqrt(S1^2 + S2^2)) / 2: the worst one; reflections enhanced"},
      {"polarizer", "(S0 + S1 cos 2t + S2 sin 2t) / 2: behind a linear polarizer at t = polarizer_deg"},
      {"normals",
       "x, y, z (f32, unit; x right, y down, z to the camera): the surface normal under the diffuse "
       "model, zenith from DoLP and refractive_index, azimuth AoLP or AoLP + 180 degrees (it cannot tell "
       "which); 0, 0, 0 where DoLP < min_dolp"},
      {"normals_visual", "RGB: x, y, z from -1..1 to 0..255; black where there is no normal"}};
  return meanings;
}

const std::vector<std::string>& outputNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, meaning] : outputMeanings()) out.push_back(name);
    return out;
  }();
  return names;
}

const char* angleName(int k) {
  static const char* names[4] = {"angle_0", "angle_45", "angle_90", "angle_135"};
  return names[k];
}

const std::vector<std::string>& rawFormatNames() {
  static const std::vector<std::string> names = {"mono8",   "mono10",  "mono12",       "mono16",
                                                 "mono10p", "mono12p", "mono10packed", "mono12packed"};
  return names;
}

RawFormat rawFormatOf(const std::string& name) {
  const auto& names = rawFormatNames();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::invalid_argument("unknown raw pixel format '" + name + "'");
  return static_cast<RawFormat>(it - names.begin());
}

const std::string& rawFormatName(RawFormat format) { return rawFormatNames().at(static_cast<size_t>(format)); }

int rawPixelWidth(RawFormat format, int planeWidth) {
  return isPacked(format) ? planeWidth / packedGroupBytes(format) * packedGroupPixels(format) : planeWidth;
}

int rawPlaneWidth(RawFormat format, int pixels) {
  return isPacked(format) ? pixels / packedGroupPixels(format) * packedGroupBytes(format) : pixels;
}

std::string checkRawSize(const Settings& s, int planeWidth, int rawHeight, int& outWidth, int& outHeight) {
  if (isPacked(s.format) && planeWidth % packedGroupBytes(s.format))
    return "a " + rawFormatName(s.format) + " plane holds " + std::to_string(packedGroupPixels(s.format)) +
           " pixels in every " + std::to_string(packedGroupBytes(s.format)) +
           " bytes, so its width in bytes must be a multiple of " + std::to_string(packedGroupBytes(s.format)) +
           "; it is " + std::to_string(planeWidth);
  int rawWidth = rawPixelWidth(s.format, planeWidth);
  int period = s.mosaic == Mosaic::rggb ? 4 : 2;
  if (rawWidth % period || rawHeight % period)
    return "a raw frame of " + std::to_string(rawWidth) + "x" + std::to_string(rawHeight) + " does not fit the " +
           (s.mosaic == Mosaic::rggb ? "polar_rggb 4x4" : "polar_mono 2x2") +
           " period: width and height must be multiples of " + std::to_string(period);
  if (rawWidth < 6 || rawHeight < 6)
    return "a raw frame must be at least 6x6 (the 5x5 demosaic window on each angle), got " + std::to_string(rawWidth) +
           "x" + std::to_string(rawHeight);
  outWidth = s.fullResolution ? rawWidth : rawWidth / 2;
  outHeight = s.fullResolution ? rawHeight : rawHeight / 2;
  return "";
}

ImageView<const uint8_t> rawBytes(const Image& raw, RawFormat format) {
  bool wide = isWide(format);
  if (wide != (raw.format().depth == Depth::u16) || raw.format().channels != 1)
    throw std::invalid_argument("raw plane of format " + toString(raw.format()) + " does not hold " +
                                (wide ? "16-bit" : "8-bit") + " samples");
  return {static_cast<const uint8_t*>(raw.data()), raw.width(), raw.height(), raw.pitch(), 1, raw.memory()};
}

}  // namespace pp::demosaic
