// The CPU reference: plain loops over the rules in cuda/sgm_types.hpp. One direction at a time adds
// its path costs to the 16-bit sum volume; path costs live only for the previous row.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stages/stereo/sgm.hpp"

namespace pp::stereo {

namespace {

constexpr int kFar = 0x3FFF;

std::vector<uint32_t> census(const Image& image) {
  auto v = image.view<uint8_t>();
  int w = v.width, h = v.height, hx = kCensusWidth / 2, hy = kCensusHeight / 2;
  auto at = [&](int x, int y) { return v.at(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1)); };
  std::vector<uint32_t> codes(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t bits = 0;
      for (int i = 0; i < kCensusWidth * kCensusHeight / 2; ++i) {
        int dx = i % kCensusWidth - hx, dy = i / kCensusWidth - hy;
        bits = (bits << 1) | (at(x + dx, y + dy) > at(x - dx, y - dy) ? 1u : 0u);
      }
      codes[static_cast<size_t>(y) * w + x] = bits;
    }
  return codes;
}

struct Inputs {
  const SgmParams& p;
  int w, h, D;
  std::vector<uint32_t> left, right;
  ImageView<const uint8_t> image;
};

// Matching costs of row y: D per pixel.
void rowCosts(const Inputs& in, int y, std::vector<uint8_t>& costs) {
  const uint32_t* l = in.left.data() + static_cast<size_t>(y) * in.w;
  const uint32_t* r = in.right.data() + static_cast<size_t>(y) * in.w;
  for (int x = 0; x < in.w; ++x)
    for (int d = 0; d < in.D; ++d) {
      int xr = x - d - in.p.minDisparity;
      costs[static_cast<size_t>(x) * in.D + d] =
          static_cast<uint8_t>(xr >= 0 ? __builtin_popcount(l[x] ^ r[xr]) : kOutsideCost);
    }
}

// One direction: rows in the order of dy, pixels in the order of dx; the predecessor of (x, y) is
// (x - dx, y - dy), in the previous row's buffer or (dy = 0) this row's.
void aggregate(const Inputs& in, int dx, int dy, std::vector<uint16_t>& volume) {
  int w = in.w, h = in.h, D = in.D;
  std::vector<uint8_t> costs(static_cast<size_t>(w) * D),
      rows[2] = {std::vector<uint8_t>(static_cast<size_t>(w) * D), std::vector<uint8_t>(static_cast<size_t>(w) * D)};
  std::vector<int> minOf[2] = {std::vector<int>(w), std::vector<int>(w)};
  for (int i = 0; i < h; ++i) {
    int y = dy >= 0 ? i : h - 1 - i;
    std::vector<uint8_t>& cur = rows[i % 2];
    const std::vector<uint8_t>& above = rows[(i + 1) % 2];
    const std::vector<uint8_t>& prevRow = dy == 0 ? cur : above;
    const std::vector<int>& prevMin = dy == 0 ? minOf[i % 2] : minOf[(i + 1) % 2];
    rowCosts(in, y, costs);
    for (int j = 0; j < w; ++j) {
      int x = dx >= 0 ? j : w - 1 - j, px = x - dx, py = y - dy;
      uint8_t* L = &cur[static_cast<size_t>(x) * D];
      const uint8_t* C = &costs[static_cast<size_t>(x) * D];
      if (px < 0 || px >= w || py < 0 || py >= h) {
        std::copy(C, C + D, L);
      } else {
        const uint8_t* P = &prevRow[static_cast<size_t>(px) * D];
        int m = prevMin[px];
        int p2 =
            adaptiveP2(in.p, std::abs(static_cast<int>(in.image.at(x, y)) - static_cast<int>(in.image.at(px, py))));
        for (int d = 0; d < D; ++d) {
          int lower = d > 0 ? P[d - 1] : kFar, upper = d < D - 1 ? P[d + 1] : kFar;
          L[d] = static_cast<uint8_t>(C[d] +
                                      std::min({static_cast<int>(P[d]), std::min(lower, upper) + in.p.p1, m + p2}) - m);
        }
      }
      minOf[i % 2][x] = *std::min_element(L, L + D);
      uint16_t* S = &volume[(static_cast<size_t>(y) * w + x) * D];
      for (int d = 0; d < D; ++d) S[d] = static_cast<uint16_t>(S[d] + L[d]);
    }
  }
}

// Rule 6: invalid pixels take the smaller of the nearest valid disparities left and right.
void fillRow(uint16_t* row, int w) {
  std::vector<uint16_t> fromLeft(w);
  uint16_t last = kInvalidDisparity;
  for (int x = 0; x < w; ++x) fromLeft[x] = last = row[x] != kInvalidDisparity ? row[x] : last;
  last = kInvalidDisparity;
  for (int x = w - 1; x >= 0; --x) {
    if (row[x] != kInvalidDisparity) {
      last = row[x];
      continue;
    }
    row[x] = std::min(fromLeft[x], last);  // kInvalidDisparity is the largest value
  }
}

}  // namespace

void sgmCpu(const SgmParams& p, const Image& left, const Image& right, Image& disparity, Image* confidence) {
  checkParams(p);
  int w = left.width(), h = left.height(), D = p.disparities;
  Inputs in{p, w, h, D, census(left), census(right), left.view<uint8_t>()};
  std::vector<uint16_t> volume(static_cast<size_t>(w) * h * D, 0);
  for (int i = 0; i < p.paths; ++i) aggregate(in, kPathDirections[i][0], kPathDirections[i][1], volume);

  Image raw({Depth::u16, 1}, w, h, MemoryKind::host);
  auto out = raw.view<uint16_t>();
  std::vector<uint32_t> rightBest(w);
  std::vector<int> leftBest(w);
  for (int y = 0; y < h; ++y) {
    std::fill(rightBest.begin(), rightBest.end(), 0xFFFFFFFFu);
    for (int x = 0; x < w; ++x) {
      const uint16_t* S = &volume[(static_cast<size_t>(y) * w + x) * D];
      int bestD = static_cast<int>(std::min_element(S, S + D) - S), best = S[bestD], second = kFar << 4;
      for (int d = 0; d < D; ++d) {
        if (std::abs(d - bestD) > 1) second = std::min<int>(second, S[d]);
        int xr = x - d - p.minDisparity;
        if (xr >= 0)
          rightBest[xr] = std::min(rightBest[xr], static_cast<uint32_t>(S[d]) << 8 | static_cast<uint32_t>(d));
      }
      bool unique = p.uniqueness <= 0 || second * (100 - p.uniqueness) >= best * 100;
      int offset = p.subpixel && bestD > 0 && bestD < D - 1 ? subpixelOffset(S[bestD - 1], best, S[bestD + 1]) : 0;
      out.at(x, y) =
          unique ? static_cast<uint16_t>(((bestD + p.minDisparity) << kSubpixelBits) + offset) : kInvalidDisparity;
      leftBest[x] = unique ? bestD : -1;
      if (confidence)
        confidence->view<uint8_t>().at(x, y) =
            unique && second > 0 ? static_cast<uint8_t>((255 * (second - best) + second / 2) / second) : 0;
    }
    for (int x = 0; x < w && p.lrMaxDiff >= 0; ++x) {
      int d = leftBest[x], xr = x - d - p.minDisparity;
      if (d < 0) continue;
      bool consistent = xr >= 0 && rightBest[xr] != 0xFFFFFFFFu &&
                        std::abs(static_cast<int>(rightBest[xr] & 0xFF) - d) <= p.lrMaxDiff;
      if (!consistent) {
        out.at(x, y) = kInvalidDisparity;
        if (confidence) confidence->view<uint8_t>().at(x, y) = 0;
      }
    }
    if (p.fill) fillRow(out.row(y), w);
  }
  auto result = disparity.view<uint16_t>();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint16_t centre = out.at(x, y);
      if (!p.median || centre == kInvalidDisparity) {
        result.at(x, y) = centre;
        continue;
      }
      uint16_t v[9];
      int n = 0;
      for (int sy = std::max(y - 1, 0); sy <= std::min(y + 1, h - 1); ++sy)
        for (int sx = std::max(x - 1, 0); sx <= std::min(x + 1, w - 1); ++sx)
          if (uint16_t d = out.at(sx, sy); d != kInvalidDisparity) {
            int i = n++;
            for (; i > 0 && v[i - 1] > d; --i) v[i] = v[i - 1];
            v[i] = d;
          }
      result.at(x, y) = v[(n - 1) / 2];
    }
}

void depthCpu(const Image& disparity, const DepthModel& m, Image& depth) {
  auto d = disparity.view<uint16_t>();
  auto z = depth.view<float>();
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x) z.at(x, y) = depthOf(m, d.at(x, y));
}

}  // namespace pp::stereo
