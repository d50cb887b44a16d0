#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "stages/dof/dof.hpp"

#include "cuda/dof_math.hpp"
#include "cuda/sgm_types.hpp"
#include "stages/dof/separable.hpp"

namespace pp::dof {

namespace {

// Gaussian of integer radius r: 2r + 1 taps, sigma r / 2 (the identity at r = 0).
std::vector<float> radiusTaps(int r) {
  return r == 0 ? std::vector<float>{1.f} : filter::gaussianTaps(2 * r + 1, 0.5 * r);
}

}  // namespace

PlaneMapping mapPlane(int planeWidth, int planeHeight, int width, int height) {
  bool larger = planeWidth >= width;
  int scale = larger ? planeWidth / width : width / planeWidth;
  bool fits = scale > 0 && (larger ? planeWidth == width * scale && planeHeight == height * scale
                                   : width == planeWidth * scale && height == planeHeight * scale);
  if (!fits)
    throw std::invalid_argument("a depth plane of " + std::to_string(planeWidth) + "x" + std::to_string(planeHeight) +
                                " is neither the image's " + std::to_string(width) + "x" + std::to_string(height) +
                                " nor an integer multiple of it");
  return {scale, larger};
}

void depthForImage(const Image& plane, bool disparity, float baselineFocal, Image& out) {
  int w = out.width(), h = out.height();
  auto [scale, larger] = mapPlane(plane.width(), plane.height(), w, h);
  auto dst = out.view<float>();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int sx = larger ? x * scale : x / scale, sy = larger ? y * scale : y / scale;
      float v = plane.format().depth == Depth::u16 ? stereo::disparityPixels(plane.view<uint16_t>().at(sx, sy))
                                                   : plane.view<float>().at(sx, sy);
      if (disparity) v = v > 0 ? baselineFocal / v : std::numeric_limits<float>::infinity();
      dst.at(x, y) = v;
    }
}

float resolveFocus(const Settings& s, const Image& depthAtImage) {
  float nearest = std::numeric_limits<float>::infinity();
  for (const auto& [x, y] : s.focusPixels) {
    float z = depthAtImage.view<float>().at(x, y);
    if (validDepth(z)) nearest = std::min(nearest, z);
  }
  return std::isfinite(nearest) ? nearest : s.focusDepth;
}

float radiusAt(const Settings& s, float z) { return blurRadius(s.focusDepth, s.k, s.rMax, z); }

void checkSettings(const Settings& s) {
  if (!std::isfinite(s.k) || s.k < 0.f)
    throw std::invalid_argument("dof: k must be a finite number >= 0, got " + std::to_string(s.k));
  if (!std::isfinite(s.focusDepth))
    throw std::invalid_argument("dof: the focus depth must be a finite number, got " + std::to_string(s.focusDepth));
  if (s.rMax < 0 || s.rMax > kMaxRadius)
    throw std::invalid_argument("dof: r_max must be in [0, " + std::to_string(kMaxRadius) + "], got " +
                                std::to_string(s.rMax));
}

// For every (band edge, radius) level the image needs: blur image x mask and the mask with that
// radius, and add each pixel's share of it (1 - t for its lower radius, t for its upper). A pixel
// whose band edge is its own depth (in front of focus beyond r_max) gathers the same sums over its
// own window instead, so memory and time are bounded by the radius levels, not by how many distinct
// depths the map holds. Plain and slow: the specification.
void renderCpu(const Settings& given, const Image& image, const Image& depth, Image& out) {
  checkSettings(given);
  Settings s = given;
  s.focusDepth = resolveFocus(given, depth);
  int w = image.width(), h = image.height(), channels = image.format().channels;
  auto z = depth.view<float>();
  auto in = image.view<uint8_t>();
  auto dst = out.view<uint8_t>();
  auto keptBehind = [&](int x, int y, float edge) {
    float zz = z.at(x, y);
    return (validDepth(zz) ? zz : std::numeric_limits<float>::infinity()) >= edge ? 1.f : 0.f;
  };

  struct PixelNeed {
    float edge, t;
    int r0, r1;
    bool ownEdge;
  };
  struct Level {
    float edge;
    int r;
    bool operator<(const Level& o) const { return edge != o.edge ? edge < o.edge : r < o.r; }
  };
  std::vector<PixelNeed> needs(static_cast<size_t>(w) * static_cast<size_t>(h));
  std::set<Level> levels;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float rho = radiusAt(s, z.at(x, y));
      PixelNeed& n = needs[static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)];
      n.r0 = static_cast<int>(std::floor(rho));
      n.r1 = std::min(n.r0 + 1, s.rMax);
      n.t = rho - static_cast<float>(n.r0);
      n.edge = bandEdge(s.focusDepth, s.k, z.at(x, y), n.r0);
      n.ownEdge = validDepth(z.at(x, y)) && n.edge == z.at(x, y);
      if (!n.ownEdge) levels.insert({n.edge, n.r0}), levels.insert({n.edge, n.r1});
    }

  // Each pixel's value: (1 - t) x its lower radius' blur + t x its upper one's; the lower radius
  // comes first (levels are sorted by radius within an edge).
  std::vector<float> blended(static_cast<size_t>(w) * static_cast<size_t>(h) * static_cast<size_t>(channels), 0.f);
  auto add = [&](size_t i, int r, const float* sums) {
    const PixelNeed& n = needs[i];
    // The pixel itself is always kept, so the weight sums[channels] is never zero.
    if (r == n.r0)
      for (int c = 0; c < channels; ++c)
        blended[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] += (1.f - n.t) * (sums[c] / sums[channels]);
    if (r == n.r1 && n.r1 != n.r0)
      for (int c = 0; c < channels; ++c)
        blended[i * static_cast<size_t>(channels) + static_cast<size_t>(c)] += n.t * (sums[c] / sums[channels]);
  };

  Format layered{Depth::f32, channels + 1};
  Image masked(layered, w, h, MemoryKind::host), blurred(layered, w, h, MemoryKind::host);
  for (const Level& level : levels) {
    auto m = masked.view<float>();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float keep = keptBehind(x, y, level.edge);
        for (int c = 0; c < channels; ++c) m.at(x, y, c) = keep * in.at(x, y, c);
        m.at(x, y, channels) = keep;
      }
    filter::separableCpu(masked, blurred, radiusTaps(level.r));
    auto b = blurred.view<float>();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        size_t i = static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x);
        if (!needs[i].ownEdge && needs[i].edge == level.edge) add(i, level.r, &b.at(x, y, 0));
      }
  }

  // The pixels with their own edge: the separable filter's sums in its order (rows, then the
  // column), over the pixel's window alone.
  std::vector<float> sums(static_cast<size_t>(channels) + 1), row(static_cast<size_t>(channels) + 1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      size_t i = static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x);
      const PixelNeed& n = needs[i];
      if (!n.ownEdge) continue;
      for (int r = n.r0; r <= n.r1; ++r) {
        std::vector<float> taps = radiusTaps(r);
        std::fill(sums.begin(), sums.end(), 0.f);
        for (int ky = 0; ky <= 2 * r; ++ky) {
          int yy = std::clamp(y - r + ky, 0, h - 1);
          std::fill(row.begin(), row.end(), 0.f);
          for (int kx = 0; kx <= 2 * r; ++kx) {
            int xx = std::clamp(x - r + kx, 0, w - 1);
            float keep = keptBehind(xx, yy, n.edge), tap = taps[static_cast<size_t>(kx)];
            for (int c = 0; c < channels; ++c) row[static_cast<size_t>(c)] += tap * (keep * in.at(xx, yy, c));
            row[static_cast<size_t>(channels)] += tap * keep;
          }
          for (int c = 0; c <= channels; ++c)
            sums[static_cast<size_t>(c)] += taps[static_cast<size_t>(ky)] * row[static_cast<size_t>(c)];
        }
        add(i, r, sums.data());
      }
    }

  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        dst.at(x, y, c) = static_cast<uint8_t>(
            std::clamp(blended[(static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) *
                                   static_cast<size_t>(channels) +
                               static_cast<size_t>(c)] +
                           0.5f,
                       0.f, 255.f));
}

}  // namespace pp::dof
