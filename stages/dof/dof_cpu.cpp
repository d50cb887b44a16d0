#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "stages/dof/dof.hpp"

#include "cuda/sgm_types.hpp"
#include "stages/dof/separable.hpp"

namespace pp::dof {

namespace {

bool valid(float z) { return std::isfinite(z) && z > 0.f; }

// Gaussian of integer radius r: 2r + 1 taps, sigma r / 2 (the identity at r = 0).
std::vector<float> radiusTaps(int r) { return r == 0 ? std::vector<float>{1.f} : filter::gaussianTaps(2 * r + 1, 0.5 * r); }

// The near edge of the depth band a pixel belongs to; it gathers only from depths at or beyond it.
float bandEdge(const Settings& s, float z, int r0) {
  if (!valid(z)) return std::numeric_limits<float>::infinity();  // far: gathers only from the far
  float edge = z >= s.focusDepth ? s.focusDepth + static_cast<float>(r0) / s.k : s.focusDepth - static_cast<float>(r0 + 1) / s.k;
  return std::min(edge, z);  // beyond r_max in front, the band reaches the pixel itself
}

}  // namespace

PlaneMapping mapPlane(int planeWidth, int planeHeight, int width, int height) {
  bool larger = planeWidth >= width;
  int scale = larger ? planeWidth / width : width / planeWidth;
  bool fits = scale > 0 && (larger ? planeWidth == width * scale && planeHeight == height * scale : width == planeWidth * scale && height == planeHeight * scale);
  if (!fits)
    throw std::invalid_argument("a depth plane of " + std::to_string(planeWidth) + "x" + std::to_string(planeHeight) + " is neither the image's " +
                                std::to_string(width) + "x" + std::to_string(height) + " nor an integer multiple of it");
  return {scale, larger};
}

void depthForImage(const Image& plane, bool disparity, float baselineFocal, Image& out) {
  int w = out.width(), h = out.height();
  auto [scale, larger] = mapPlane(plane.width(), plane.height(), w, h);
  auto dst = out.view<float>();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int sx = larger ? x * scale : x / scale, sy = larger ? y * scale : y / scale;
      float v = plane.format().depth == Depth::u16 ? stereo::disparityPixels(plane.view<uint16_t>().at(sx, sy)) : plane.view<float>().at(sx, sy);
      if (disparity) v = v > 0 ? baselineFocal / v : std::numeric_limits<float>::infinity();
      dst.at(x, y) = v;
    }
}

float resolveFocus(const Settings& s, const Image& depthAtImage) {
  float nearest = std::numeric_limits<float>::infinity();
  for (const auto& [x, y] : s.focusPixels) {
    float z = depthAtImage.view<float>().at(x, y);
    if (valid(z)) nearest = std::min(nearest, z);
  }
  return std::isfinite(nearest) ? nearest : s.focusDepth;
}

float radiusAt(const Settings& s, float z) {
  if (!valid(z)) return static_cast<float>(s.rMax);
  return std::min(s.k * std::fabs(z - s.focusDepth), static_cast<float>(s.rMax));
}

// For every (band edge, radius) the image needs: blur image x mask and the mask with that radius,
// then each pixel divides and mixes its two radii. Plain and slow: the specification.
void renderCpu(const Settings& given, const Image& image, const Image& depth, Image& out) {
  Settings s = given;
  s.focusDepth = resolveFocus(given, depth);
  int w = image.width(), h = image.height(), channels = image.format().channels;
  auto z = depth.view<float>();
  auto in = image.view<uint8_t>();
  auto dst = out.view<uint8_t>();
  struct Need {
    float edge;
    int r;
    bool operator<(const Need& o) const { return edge != o.edge ? edge < o.edge : r < o.r; }
  };
  std::map<Need, Image> blurred;  // f32 with channels + 1: image x mask, then the mask
  auto needsOf = [&](int x, int y, int& r0, int& r1, float& t, float& edge) {
    float rho = radiusAt(s, z.at(x, y));
    r0 = static_cast<int>(std::floor(rho));
    r1 = std::min(r0 + 1, s.rMax);
    t = rho - static_cast<float>(r0);
    edge = bandEdge(s, z.at(x, y), r0);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int r0, r1;
      float t, edge;
      needsOf(x, y, r0, r1, t, edge);
      for (int r : {r0, r1}) blurred.emplace(Need{edge, r}, Image());
    }
  Format layered{Depth::f32, channels + 1};
  for (auto& [need, result] : blurred) {
    Image masked(layered, w, h, MemoryKind::host);
    auto m = masked.view<float>();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float keep = (valid(z.at(x, y)) ? z.at(x, y) : std::numeric_limits<float>::infinity()) >= need.edge ? 1.f : 0.f;
        for (int c = 0; c < channels; ++c) m.at(x, y, c) = keep * in.at(x, y, c);
        m.at(x, y, channels) = keep;
      }
    result = Image(layered, w, h, MemoryKind::host);
    filter::separableCpu(masked, result, radiusTaps(need.r));
  }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int r0, r1;
      float t, edge;
      needsOf(x, y, r0, r1, t, edge);
      auto a = blurred.at(Need{edge, r0}).view<float>(), b = blurred.at(Need{edge, r1}).view<float>();
      for (int c = 0; c < channels; ++c) {
        // The pixel itself is always kept, so neither weight is zero.
        float v0 = a.at(x, y, c) / a.at(x, y, channels), v1 = b.at(x, y, c) / b.at(x, y, channels);
        dst.at(x, y, c) = static_cast<uint8_t>(std::clamp((1.f - t) * v0 + t * v1 + 0.5f, 0.f, 255.f));
      }
    }
}

}  // namespace pp::dof
