#include <algorithm>
#include <cmath>
#include <cstring>

#include "stages/faces/faces.hpp"

#if POLARPIPE_HAS_CUDA
#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#include "cuda/haar.cuh"
#include "cuda/haar_norm.hpp"
#include "cuda/luma.cuh"
#include "pipeline/device_buffer.hpp"
#endif

namespace pp::faces {

float boxDepth(const Image& depth, const Box& box, StreamHandle stream) {
  int x0 = std::clamp(static_cast<int>(box.x + box.w / 3), 0, depth.width() - 1),
      y0 = std::clamp(static_cast<int>(box.y + box.h / 3), 0, depth.height() - 1);
  int w = std::clamp(static_cast<int>(box.w / 3), 1, depth.width() - x0),
      h = std::clamp(static_cast<int>(box.h / 3), 1, depth.height() - y0);
  std::vector<float> samples(static_cast<size_t>(w) * h);
  const char* origin = static_cast<const char*>(depth.data()) + static_cast<size_t>(y0) * depth.pitch() +
                       static_cast<size_t>(x0) * sizeof(float);
  if (depth.memory() == MemoryKind::device) {
#if POLARPIPE_HAS_CUDA
    PP_CUDA_CHECK(cudaMemcpy2DAsync(samples.data(), w * sizeof(float), origin, depth.pitch(), w * sizeof(float), h,
                                    cudaMemcpyDeviceToHost, stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
  } else {
    for (int j = 0; j < h; ++j)
      std::memcpy(&samples[static_cast<size_t>(j) * w], origin + static_cast<size_t>(j) * depth.pitch(),
                  w * sizeof(float));
  }
  auto end = std::remove_if(samples.begin(), samples.end(), [](float z) { return !(std::isfinite(z) && z > 0.f); });
  if (end == samples.begin()) return 0.f;
  auto middle = samples.begin() + (end - samples.begin()) / 2;
  std::nth_element(samples.begin(), middle, end);
  return *middle;
}

#if POLARPIPE_HAS_CUDA

namespace {

// The fixed point in which a cascade's leaf values and stage thresholds are whole numbers: the
// fraction bits of the finest of them. Where every stage's sum stays below 2^53 units, OpenCV's
// double sums of those floats are exact, so 64-bit integer sums equal them in any order.
int fixedPointBits(const Cascade& c) {
  int bits = 0;
  auto finest = [&](float v) {
    if (v == 0.f) return;
    int exponent = 0;
    double mantissa = std::frexp(static_cast<double>(v), &exponent);  // v = mantissa 2^exponent
    auto whole = static_cast<long long>(std::ldexp(std::fabs(mantissa), 24));
    int fraction = 24 - exponent;
    while (whole % 2 == 0) whole /= 2, --fraction;
    bits = std::max(bits, fraction);
  };
  auto stump = [&c](const CascadeStage& st, int k) -> const Stump& {
    return c.stumps[static_cast<size_t>(st.first) + static_cast<size_t>(k)];
  };
  for (const CascadeStage& st : c.stages) {
    finest(st.threshold);
    for (int k = 0; k < st.count; ++k) finest(stump(st, k).left), finest(stump(st, k).right);
  }
  // Only once every value's bits are known can each stage's largest sum be checked against them.
  for (const CascadeStage& st : c.stages) {
    double largest = std::fabs(st.threshold);
    for (int k = 0; k < st.count; ++k) largest += std::max(std::fabs(stump(st, k).left), std::fabs(stump(st, k).right));
    if (std::ldexp(largest, bits) >= 0x1p53)
      throw std::invalid_argument(
          "face_detect: this cascade's leaf values need more than 53 bits to be summed exactly (" +
          std::to_string(bits) + " fraction bits); the CUDA backend sums them in 64-bit integers; use backend cpu");
  }
  return bits;
}

long long fixedPoint(float v, int bits) { return static_cast<long long>(std::ldexp(static_cast<double>(v), bits)); }

}  // namespace

struct FaceDetectorCuda::State {
  Cascade cascade;
  int width, height;
  std::vector<Level> levels;
  std::vector<LevelGeometry> geometry;
  DeviceBuffer<LevelGeometry> deviceGeometry;
  DeviceBuffer<int2> tables;
  DeviceBuffer<uint8_t> tileLevels;
  DeviceBuffer<GpuStump> stumps;
  DeviceBuffer<GpuStage> stages;
  DeviceBuffer<uint8_t> pixels;
  DeviceBuffer<int8_t> codes;
  DeviceBuffer<float> norms;
  DeviceBuffer<Candidate> found;
  DeviceBuffer<int> foundCount;
  PinnedBuffer<int> hostCount{1};
  PinnedBuffer<Candidate> hostFound;  // the first windows, read back with their count
  int capacity = 0, mostRows = 0, pixelTiles = 0, windowTiles = 0;
  Image grey;  // colour input made grey
};

FaceDetectorCuda::FaceDetectorCuda(const Cascade& c, const DetectParams& p, int width, int height)
    : p_(p), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.cascade = c;
  s.width = width, s.height = height;
  s.levels = pyramid(c, width, height, p);
  if (s.levels.size() > static_cast<size_t>(kMaxLevels))
    throw std::invalid_argument("face_detect: scale_factor " + std::to_string(p.scaleFactor) + " makes " +
                                std::to_string(s.levels.size()) + " pyramid levels of a " + std::to_string(width) +
                                "x" + std::to_string(height) + " image; the CUDA backend takes at most " +
                                std::to_string(kMaxLevels) + ": use a larger scale_factor or min_size, or backend cpu");
  std::vector<int2> tables;
  std::vector<uint8_t> tileLevels, windowTileLevels;  // each tile's level: the pixel tiles', then the window tiles'
  size_t pixels = 0, windows = 0;
  for (const Level& l : s.levels) {
    const auto level = static_cast<uint8_t>(s.geometry.size());
    LevelGeometry g{};
    g.scale = l.scale, g.width = l.width, g.height = l.height, g.step = l.step;
    g.cols = std::max(0, (l.width + 1 - c.width + l.step - 1) / l.step);
    g.rows = std::max(0, (l.height + 1 - c.height + l.step - 1) / l.step);
    g.imageOffset = pixels, g.codeOffset = windows;
    pixels += static_cast<size_t>(l.width) * l.height;
    windows += static_cast<size_t>(g.cols) * g.rows;
    g.mode = l.width == width && l.height == height ? 0 : width == 2 * l.width && height == 2 * l.height ? 2 : 1;
    ResizeAxis ax = resizeAxis(width, l.width), ay = resizeAxis(height, l.height);
    g.tableX = static_cast<int>(tables.size());
    for (int i = 0; i < l.width; ++i) tables.push_back({ax.index[i], ax.weight[i]});
    g.tableY = static_cast<int>(tables.size());
    for (int i = 0; i < l.height; ++i) tables.push_back({ay.index[i], ay.weight[i]});
    g.beforeX = ax.before, g.afterX = ax.after, g.beforeY = ay.before, g.afterY = ay.after;
    s.mostRows = std::max(s.mostRows, g.rows);
    g.pixelTile = s.pixelTiles, g.windowTile = s.windowTiles;
    const int pixelTiles = (l.width + kPixelTileX - 1) / kPixelTileX * ((l.height + kPixelTileY - 1) / kPixelTileY),
              windowTiles = (g.cols + kWindowTileX - 1) / kWindowTileX * ((g.rows + kWindowTileY - 1) / kWindowTileY);
    s.pixelTiles += pixelTiles, s.windowTiles += windowTiles;
    tileLevels.insert(tileLevels.end(), static_cast<size_t>(pixelTiles), level);
    windowTileLevels.insert(windowTileLevels.end(), static_cast<size_t>(windowTiles), level);
    s.geometry.push_back(g);
  }
  tileLevels.insert(tileLevels.end(), windowTileLevels.begin(), windowTileLevels.end());
  s.capacity = static_cast<int>(std::max<size_t>(windows, 1));
  if ((c.width - 2) * (c.height - 2) >= kMaxNormArea)
    throw std::invalid_argument("face_detect: the cascade's " + std::to_string(c.width) + "x" +
                                std::to_string(c.height) +
                                " window is too large for the CUDA backend's variance normalisation (at most " +
                                std::to_string(kMaxNormArea - 1) + " pixels inside its border); use backend cpu");
  const int bits = fixedPointBits(c), pitch = tilePitch(c.width);
  // Each stage's stumps with two rectangles first (a third of weight 0 is none, as OpenCV skips it).
  auto gpuStump = [&](const Stump& st) {
    const HaarFeature& f = c.features[static_cast<size_t>(st.feature)];
    GpuStump g{};
    for (int k = 0; k < f.count; ++k) {
      const auto& r = f.rects[k];
      const int bytes = sizeof(uint32_t), topLeft = (r.y * pitch + r.x) * bytes,
                bottomLeft = ((r.y + r.h) * pitch + r.x) * bytes;
      g.corners[k][0] = topLeft, g.corners[k][1] = topLeft + r.w * bytes, g.corners[k][2] = bottomLeft,
      g.corners[k][3] = bottomLeft + r.w * bytes;
      g.weight[k] = r.weight;
    }
    g.threshold = st.threshold, g.left = fixedPoint(st.left, bits), g.right = fixedPoint(st.right, bits);
    return g;
  };
  std::vector<GpuStump> stumps;
  std::vector<GpuStage> stages;
  for (const CascadeStage& st : c.stages) {
    GpuStage stage{static_cast<int>(stumps.size()), st.count, 0, 0, fixedPoint(st.threshold, bits)};
    std::vector<GpuStump> threeRects;
    for (int k = 0; k < st.count; ++k) {
      const GpuStump g = gpuStump(c.stumps[static_cast<size_t>(st.first) + static_cast<size_t>(k)]);
      if (g.weight[2] == 0.f) {
        stumps.push_back(g), ++stage.twoRects;
      } else {
        threeRects.push_back(g);
      }
    }
    stumps.insert(stumps.end(), threeRects.begin(), threeRects.end());
    stages.push_back(stage);
  }
  auto upload = [](auto& buffer, const auto& host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    buffer = DeviceBuffer<T>(std::max<size_t>(host.size(), 1));
    if (!host.empty())
      PP_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  };
  upload(s.deviceGeometry, s.geometry);
  upload(s.tables, tables);
  upload(s.tileLevels, tileLevels);
  upload(s.stumps, stumps);
  upload(s.stages, stages);
  finishSynchronousCopies();
  s.pixels = DeviceBuffer<uint8_t>(std::max<size_t>(pixels, 1));
  s.codes = DeviceBuffer<int8_t>(static_cast<size_t>(s.capacity));
  s.norms = DeviceBuffer<float>(static_cast<size_t>(s.capacity));
  s.found = DeviceBuffer<Candidate>(static_cast<size_t>(s.capacity));
  s.foundCount = DeviceBuffer<int>(1);
  s.hostFound = PinnedBuffer<Candidate>(std::min<size_t>(s.capacity, kWindowsReadWithCount));
}

FaceDetectorCuda::~FaceDetectorCuda() = default;

std::vector<Window> FaceDetectorCuda::detectRaw(const Image& image, StreamHandle stream) {
  State& s = *state_;
  if (image.width() != s.width || image.height() != s.height || image.format().depth != Depth::u8 ||
      image.format().channels == 4)
    throw std::invalid_argument("face_detect: expected a u8x1 or u8x3 " + std::to_string(s.width) + "x" +
                                std::to_string(s.height) + " image");
  if (s.levels.empty()) return {};  // smaller than the window
  const Image* source = &image;
  if (image.format().channels == 3) {
    if (s.grey.empty()) s.grey = Image({Depth::u8, 1}, s.width, s.height, MemoryKind::device);
    launchLuma(image.view<uint8_t>(), s.grey.view<uint8_t>(), stream);
    source = &s.grey;
  }
  const Image& grey = *source;
  PyramidArgs a{static_cast<const uint8_t*>(grey.data()),
                s.width,
                s.height,
                grey.pitch(),
                static_cast<int>(s.levels.size()),
                s.deviceGeometry.get(),
                s.tables.get(),
                s.tileLevels.get(),
                s.pixels.get(),
                s.pixelTiles,
                s.windowTiles};
  CascadeArgs c{s.stumps.get(), s.stages.get(), static_cast<int>(s.cascade.stages.size()), s.cascade.width,
                s.cascade.height};
  PP_CUDA_CHECK(cudaMemsetAsync(s.foundCount.get(), 0, sizeof(int), stream));
  launchPyramid(a, stream);
  launchFirstStage(c, a, s.mostRows, s.codes.get(), s.norms.get(), stream);
  launchLaterStages(c, a, s.codes.get(), s.norms.get(), s.found.get(), s.foundCount.get(), s.capacity, stream);
  // The count and the first windows in one wait (a frame's faces rarely give more); the rest after.
  PP_CUDA_CHECK(cudaMemcpyAsync(s.hostCount.get(), s.foundCount.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  PP_CUDA_CHECK(cudaMemcpyAsync(s.hostFound.get(), s.found.get(), s.hostFound.size() * sizeof(Candidate),
                                cudaMemcpyDeviceToHost, stream));
  PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  const size_t found = static_cast<size_t>(std::min(*s.hostCount.get(), s.capacity)),
               first = std::min(found, s.hostFound.size());
  std::vector<Candidate> candidates(s.hostFound.get(), s.hostFound.get() + first);
  if (found > first) {
    candidates.resize(found);
    PP_CUDA_CHECK(cudaMemcpyAsync(candidates.data() + first, s.found.get() + first, (found - first) * sizeof(Candidate),
                                  cudaMemcpyDeviceToHost, stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // The CPU reference's order: level by level, rows top to bottom.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& l, const Candidate& r) {
    return std::tie(l.level, l.y, l.x) < std::tie(r.level, r.y, r.x);
  });
  std::vector<Window> windows;
  for (const Candidate& w : candidates)
    windows.push_back(reportedWindow(s.cascade, s.levels[w.level].scale, w.x, w.y, s.width, s.height));
  return windows;
}

#else

struct FaceDetectorCuda::State {};
FaceDetectorCuda::FaceDetectorCuda(const Cascade&, const DetectParams& p, int, int) : p_(p) {
  throw std::logic_error("face_detect: this build has no CUDA");
}
FaceDetectorCuda::~FaceDetectorCuda() = default;
std::vector<Window> FaceDetectorCuda::detectRaw(const Image&, StreamHandle) { return {}; }

#endif

}  // namespace pp::faces
