#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "stages/faces/faces.hpp"

namespace pp::faces {

namespace {

int roundHalfEven(double v) { return static_cast<int>(std::nearbyint(v)); }

}  // namespace

// src = scale * (d + 0.5) - 0.5 in double, as OpenCV's interpolationLinear.
ResizeAxis resizeAxis(int srcSize, int dstSize) {
  ResizeAxis a;
  a.index.resize(dstSize);
  a.weight.resize(dstSize);
  a.after = dstSize;
  double inv = static_cast<double>(dstSize) / srcSize, scale = 1.0 / inv;
  for (int d = 0; d < dstSize; ++d) {
    double f = scale * (d + 0.5) - 0.5;
    int i = static_cast<int>(std::floor(f));
    if (i >= 0 && srcSize > 1) {
      if (i < srcSize - 1) {
        a.index[d] = i;
        a.weight[d] = roundHalfEven((f - i) * 256);
      } else {
        a.index[d] = srcSize - 1;
        a.after = std::min(a.after, d);
      }
    } else {
      a.before = std::max(a.before, d + 1);
    }
  }
  return a;
}

Window reportedWindow(const Cascade& c, float scale, int x, int y, int width, int height) {
  // int * float products, as OpenCV computes them
  Window w{roundHalfEven(x * scale), roundHalfEven(y * scale), roundHalfEven(c.width * scale),
           roundHalfEven(c.height * scale)};
  w.w = std::min(w.w, width - w.x);
  w.h = std::min(w.h, height - w.y);
  return w;
}

void checkDetectParams(const DetectParams& p) {
  // A step of 1 or less (or NaN) would never reach the image's size.
  if (!std::isfinite(p.scaleFactor) || !(p.scaleFactor > 1.0))
    throw std::invalid_argument("faces: the scale factor must be a finite number > 1, got " +
                                std::to_string(p.scaleFactor));
  if (p.minSize > 0 && p.maxSize > 0 && p.minSize > p.maxSize)
    throw std::invalid_argument("faces: min_size " + std::to_string(p.minSize) + " is larger than max_size " +
                                std::to_string(p.maxSize) + ": no face could be found");
}

std::vector<Level> pyramid(const Cascade& c, int width, int height, const DetectParams& p) {
  checkDetectParams(p);
  int maxW = p.maxSize > 0 ? p.maxSize : width, maxH = p.maxSize > 0 ? p.maxSize : height;
  std::vector<Level> levels;
  for (double factor = 1;; factor *= p.scaleFactor) {
    int ww = roundHalfEven(c.width * factor), wh = roundHalfEven(c.height * factor);
    if (ww > maxW || wh > maxH || ww > width || wh > height) break;
    if (ww < p.minSize || wh < p.minSize) continue;
    Level l;
    l.scale = static_cast<float>(factor);
    l.width = roundHalfEven(width / l.scale);
    l.height = roundHalfEven(height / l.scale);
    l.step = l.scale >= 2 ? 1 : 2;
    levels.push_back(l);
  }
  return levels;
}

void resizeExact(const Image& src, Image& dst) {
  auto s = src.view<uint8_t>();
  auto d = dst.view<uint8_t>();
  if (s.width == d.width && s.height == d.height) {
    for (int y = 0; y < d.height; ++y) std::copy(s.row(y), s.row(y) + s.width, d.row(y));
    return;
  }
  if (s.width == 2 * d.width && s.height == 2 * d.height) {  // OpenCV takes INTER_AREA here
    for (int y = 0; y < d.height; ++y)
      for (int x = 0; x < d.width; ++x)
        d.at(x, y) = static_cast<uint8_t>(
            (s.at(2 * x, 2 * y) + s.at(2 * x + 1, 2 * y) + s.at(2 * x, 2 * y + 1) + s.at(2 * x + 1, 2 * y + 1) + 2) >>
            2);
    return;
  }
  ResizeAxis ax = resizeAxis(s.width, d.width), ay = resizeAxis(s.height, d.height);
  // Horizontal pass into 8.8 fixed point, then vertical with rounding from 16 fraction bits.
  auto horizontal = [&](int sy, std::vector<uint32_t>& line) {
    const uint8_t* row = s.row(sy);
    for (int x = 0; x < d.width; ++x) {
      if (x < ax.before)
        line[x] = row[0] << 8;
      else if (x >= ax.after)
        line[x] = row[s.width - 1] << 8;
      else
        line[x] = row[ax.index[x]] * (256 - ax.weight[x]) + row[ax.index[x] + 1] * ax.weight[x];
    }
  };
  std::vector<uint32_t> top(d.width), bottom(d.width);
  for (int y = 0; y < d.height; ++y) {
    uint8_t* out = d.row(y);
    if (y < ay.before || y >= ay.after) {
      horizontal(y < ay.before ? 0 : s.height - 1, top);
      for (int x = 0; x < d.width; ++x) out[x] = static_cast<uint8_t>((top[x] + 128) >> 8);
      continue;
    }
    horizontal(ay.index[y], top);
    horizontal(ay.index[y] + 1, bottom);
    uint32_t w1 = static_cast<uint32_t>(ay.weight[y]), w0 = 256 - w1;
    for (int x = 0; x < d.width; ++x) out[x] = static_cast<uint8_t>((top[x] * w0 + bottom[x] * w1 + (1u << 15)) >> 16);
  }
}

std::vector<Window> detectRawCpu(const Cascade& c, const Image& grey, const DetectParams& p) {
  std::vector<Window> found;
  int nx = 1, ny = 1, nw = c.width - 2, nh = c.height - 2;  // normalisation rect
  double area = static_cast<double>(nw) * nh;
  for (const Level& level : pyramid(c, grey.width(), grey.height(), p)) {
    Image resized({Depth::u8, 1}, level.width, level.height, MemoryKind::host);
    resizeExact(grey, resized);
    int iw = level.width + 1, ih = level.height + 1;
    std::vector<int32_t> sum(static_cast<size_t>(iw) * ih, 0);
    std::vector<uint32_t> sq(static_cast<size_t>(iw) * ih, 0);  // wraps like OpenCV's CV_32S
    auto r = resized.view<uint8_t>();
    for (int y = 0; y < level.height; ++y) {
      int32_t rowSum = 0;
      uint32_t rowSq = 0;
      for (int x = 0; x < level.width; ++x) {
        uint32_t v = r.at(x, y);
        rowSum += static_cast<int32_t>(v);
        rowSq += v * v;
        size_t i = static_cast<size_t>(y + 1) * iw + x + 1;
        sum[i] = sum[i - iw] + rowSum;
        sq[i] = sq[i - iw] + rowSq;
      }
    }
    auto rectSum = [&](int x, int y, int w, int h) {
      size_t a = static_cast<size_t>(y) * iw + x, b = a + w, cc = a + static_cast<size_t>(h) * iw, dd = cc + w;
      return sum[a] - sum[b] - sum[cc] + sum[dd];
    };
    for (int y = 0; y + c.height < ih; y += level.step) {
      for (int x = 0; x + c.width < iw; x += level.step) {
        int result = -1;
        int valsum = rectSum(x + nx, y + ny, nw, nh);
        size_t a = static_cast<size_t>(y + ny) * iw + x + nx, b = a + nw, cc = a + static_cast<size_t>(nh) * iw,
               dd = cc + nw;
        uint32_t valsq = sq[a] - sq[b] - sq[cc] + sq[dd];
        double nf = area * valsq - static_cast<double>(valsum) * valsum;
        if (nf > 0) {
          float norm = static_cast<float>(1. / std::sqrt(nf));
          if (area * norm < 1e-1) {
            result = 1;
            for (size_t si = 0; si < c.stages.size() && result == 1; ++si) {
              const CascadeStage& stage = c.stages[si];
              double total = 0;
              for (int k = 0; k < stage.count; ++k) {
                const Stump& stump = c.stumps[static_cast<size_t>(stage.first) + static_cast<size_t>(k)];
                const HaarFeature& f = c.features[static_cast<size_t>(stump.feature)];
                float value =
                    f.rects[0].weight *
                        static_cast<float>(rectSum(x + f.rects[0].x, y + f.rects[0].y, f.rects[0].w, f.rects[0].h)) +
                    f.rects[1].weight *
                        static_cast<float>(rectSum(x + f.rects[1].x, y + f.rects[1].y, f.rects[1].w, f.rects[1].h));
                if (f.rects[2].weight != 0.f)
                  value += f.rects[2].weight *
                           static_cast<float>(rectSum(x + f.rects[2].x, y + f.rects[2].y, f.rects[2].w, f.rects[2].h));
                value *= norm;
                total += value < stump.threshold ? stump.left : stump.right;
              }
              if (total < stage.threshold) result = -static_cast<int>(si);
            }
          }
        }
        if (result > 0) found.push_back(reportedWindow(c, level.scale, x, y, grey.width(), grey.height()));
        if (result == 0) x += level.step;  // OpenCV skips the next window after a first-stage rejection
      }
    }
  }
  return found;
}

Detections groupWindows(const std::vector<Window>& windows, int minNeighbors, double eps) {
  Detections out;
  if (minNeighbors <= 0) {
    for (const Window& w : windows)
      out.push_back(
          {static_cast<float>(w.x), static_cast<float>(w.y), static_cast<float>(w.w), static_cast<float>(w.h), 1});
    return out;
  }
  auto similar = [eps](const Window& a, const Window& b) {
    double delta = eps * (std::min(a.w, b.w) + std::min(a.h, b.h)) * 0.5;
    return std::abs(a.x - b.x) <= delta && std::abs(a.y - b.y) <= delta && std::abs(a.x + a.w - b.x - b.w) <= delta &&
           std::abs(a.y + a.h - b.y - b.h) <= delta;
  };
  // Equivalence classes (cv::partition), numbered by their first member.
  size_t n = windows.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (similar(windows[i], windows[j])) parent[find(i)] = find(j);
  std::vector<int> label(n), classOf(n, -1);
  int classes = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t root = find(i);
    if (classOf[root] < 0) classOf[root] = classes++;
    label[i] = classOf[root];
  }
  std::vector<std::array<int, 4>> totals(static_cast<size_t>(classes), {0, 0, 0, 0});
  std::vector<int> count(static_cast<size_t>(classes), 0);
  for (size_t i = 0; i < n; ++i) {
    auto& t = totals[static_cast<size_t>(label[i])];
    t[0] += windows[i].x, t[1] += windows[i].y, t[2] += windows[i].w, t[3] += windows[i].h;
    ++count[static_cast<size_t>(label[i])];
  }
  std::vector<Window> mean(static_cast<size_t>(classes));
  for (size_t k = 0; k < mean.size(); ++k) {
    float s = 1.f / static_cast<float>(count[k]);
    mean[k] = {roundHalfEven(totals[k][0] * s), roundHalfEven(totals[k][1] * s), roundHalfEven(totals[k][2] * s),
               roundHalfEven(totals[k][3] * s)};
  }
  for (size_t i = 0; i < mean.size(); ++i) {
    int n1 = count[i];
    if (n1 <= minNeighbors) continue;
    const Window& r1 = mean[i];
    bool inside = false;
    for (size_t j = 0; j < mean.size() && !inside; ++j) {
      int n2 = count[j];
      if (j == i || n2 <= minNeighbors) continue;
      const Window& r2 = mean[j];
      int dx = roundHalfEven(r2.w * eps), dy = roundHalfEven(r2.h * eps);
      inside = r1.x >= r2.x - dx && r1.y >= r2.y - dy && r1.x + r1.w <= r2.x + r2.w + dx &&
               r1.y + r1.h <= r2.y + r2.h + dy && (n2 > std::max(3, n1) || n1 < 3);
    }
    if (!inside)
      out.push_back(
          {static_cast<float>(r1.x), static_cast<float>(r1.y), static_cast<float>(r1.w), static_cast<float>(r1.h), n1});
  }
  return out;
}

Detections detectCpu(const Cascade& c, const Image& image, const DetectParams& p) {
  if (image.format().channels == 3) {
    Image grey({Depth::u8, 1}, image.width(), image.height(), MemoryKind::host);
    rgbToGrey(image, grey);
    return groupWindows(detectRawCpu(c, grey, p), p.minNeighbors);
  }
  return groupWindows(detectRawCpu(c, image, p), p.minNeighbors);
}

}  // namespace pp::faces
