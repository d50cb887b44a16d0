#include <algorithm>
#include <cmath>
#include <cstring>

#include "stages/faces/faces.hpp"

#if POLARPIPE_HAS_CUDA
#include "cuda/haar.cuh"
#include "cuda/luma.cuh"
#include "pipeline/cuda_check.hpp"
#include "pipeline/device_buffer.hpp"
#endif

namespace pp::faces {

float boxDepth(const Image& depth, const Box& box, StreamHandle stream) {
  int x0 = std::clamp(static_cast<int>(box.x + box.w / 3), 0, depth.width() - 1), y0 = std::clamp(static_cast<int>(box.y + box.h / 3), 0, depth.height() - 1);
  int w = std::clamp(static_cast<int>(box.w / 3), 1, depth.width() - x0), h = std::clamp(static_cast<int>(box.h / 3), 1, depth.height() - y0);
  std::vector<float> samples(static_cast<size_t>(w) * h);
  const char* origin = static_cast<const char*>(depth.data()) + static_cast<size_t>(y0) * depth.pitch() + static_cast<size_t>(x0) * sizeof(float);
  if (depth.memory() == MemoryKind::device) {
#if POLARPIPE_HAS_CUDA
    PP_CUDA_CHECK(cudaMemcpy2DAsync(samples.data(), w * sizeof(float), origin, depth.pitch(), w * sizeof(float), h, cudaMemcpyDeviceToHost, stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
  } else {
    for (int j = 0; j < h; ++j) std::memcpy(&samples[static_cast<size_t>(j) * w], origin + static_cast<size_t>(j) * depth.pitch(), w * sizeof(float));
  }
  auto end = std::remove_if(samples.begin(), samples.end(), [](float z) { return !(std::isfinite(z) && z > 0.f); });
  if (end == samples.begin()) return 0.f;
  auto middle = samples.begin() + (end - samples.begin()) / 2;
  std::nth_element(samples.begin(), middle, end);
  return *middle;
}

#if POLARPIPE_HAS_CUDA

namespace {
// Stage groups after the first: each runs on the survivors of the one before. The first
// kGroupsByThread (short stages on most windows) take a thread a window, the rest a warp.
constexpr int kStageGroupEnds[] = {3, 6, 10, 16, 1 << 30};
constexpr int kGroupsByThread = 2;
}  // namespace

struct FaceDetectorCuda::State {
  Cascade cascade;
  int width, height;
  std::vector<Level> levels;
  std::vector<LevelGeometry> geometry;
  DeviceBuffer<LevelGeometry> deviceGeometry;
  DeviceBuffer<int2> tables;
  DeviceBuffer<GpuStump> stumps;
  DeviceBuffer<GpuStage> stages;
  DeviceBuffer<uint8_t> pixels;
  DeviceBuffer<int32_t> sums;
  DeviceBuffer<uint32_t> squares;
  DeviceBuffer<int8_t> codes;
  DeviceBuffer<float> norms;
  DeviceBuffer<Candidate> lists[2];
  DeviceBuffer<int> counts;  // one per list use
  int capacity = 0, largestWidth = 0, largestHeight = 0, mostCols = 0, mostRows = 0, pixelTiles = 0, windowTiles = 0;
  int blocksByThread = 0, blocksByWarp = 0;  // the stage groups' grids
  Image grey;  // colour input made grey
};

FaceDetectorCuda::FaceDetectorCuda(const Cascade& c, const DetectParams& p, int width, int height) : p_(p), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.cascade = c;
  s.width = width, s.height = height;
  s.levels = pyramid(c, width, height, p);
  if (s.levels.size() > static_cast<size_t>(kMaxLevels)) s.levels.resize(kMaxLevels);
  std::vector<int2> tables;
  size_t pixels = 0, integrals = 0, windows = 0;
  for (const Level& l : s.levels) {
    LevelGeometry g{};
    g.scale = l.scale, g.width = l.width, g.height = l.height, g.step = l.step;
    g.cols = std::max(0, (l.width + 1 - c.width + l.step - 1) / l.step);
    g.rows = std::max(0, (l.height + 1 - c.height + l.step - 1) / l.step);
    g.imageOffset = pixels, g.integralOffset = integrals, g.codeOffset = windows;
    pixels += static_cast<size_t>(l.width) * l.height;
    integrals += static_cast<size_t>(l.width + 1) * (l.height + 1);
    windows += static_cast<size_t>(g.cols) * g.rows;
    g.mode = l.width == width && l.height == height ? 0 : width == 2 * l.width && height == 2 * l.height ? 2 : 1;
    ResizeAxis ax = resizeAxis(width, l.width), ay = resizeAxis(height, l.height);
    g.tableX = static_cast<int>(tables.size());
    for (int i = 0; i < l.width; ++i) tables.push_back({ax.index[i], ax.weight[i]});
    g.tableY = static_cast<int>(tables.size());
    for (int i = 0; i < l.height; ++i) tables.push_back({ay.index[i], ay.weight[i]});
    g.beforeX = ax.before, g.afterX = ax.after, g.beforeY = ay.before, g.afterY = ay.after;
    s.largestWidth = std::max(s.largestWidth, l.width), s.largestHeight = std::max(s.largestHeight, l.height);
    s.mostCols = std::max(s.mostCols, g.cols), s.mostRows = std::max(s.mostRows, g.rows);
    g.pixelTile = s.pixelTiles, g.windowTile = s.windowTiles;
    s.pixelTiles += (l.width + kTileX - 1) / kTileX * ((l.height + kTileY - 1) / kTileY);
    s.windowTiles += (g.cols + kTileX - 1) / kTileX * ((g.rows + kTileY - 1) / kTileY);
    s.geometry.push_back(g);
  }
  s.capacity = static_cast<int>(std::max<size_t>(windows, 1));
  std::vector<GpuStump> stumps;
  for (const Stump& st : c.stumps) {
    const HaarFeature& f = c.features[static_cast<size_t>(st.feature)];
    GpuStump g{st.threshold, st.left, st.right, f.count, {}, {}, {}, {}, {}};
    for (int k = 0; k < f.count; ++k) g.x[k] = f.rects[k].x, g.y[k] = f.rects[k].y, g.w[k] = f.rects[k].w, g.h[k] = f.rects[k].h, g.weight[k] = f.rects[k].weight;
    stumps.push_back(g);
  }
  std::vector<GpuStage> stages;
  for (const CascadeStage& st : c.stages) stages.push_back({st.first, st.count, st.threshold});
  auto upload = [](auto& buffer, const auto& host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    buffer = DeviceBuffer<T>(std::max<size_t>(host.size(), 1));
    if (!host.empty()) PP_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  };
  upload(s.deviceGeometry, s.geometry);
  upload(s.tables, tables);
  upload(s.stumps, stumps);
  upload(s.stages, stages);
  s.pixels = DeviceBuffer<uint8_t>(std::max<size_t>(pixels, 1));
  s.sums = DeviceBuffer<int32_t>(std::max<size_t>(integrals, 1));
  s.squares = DeviceBuffer<uint32_t>(std::max<size_t>(integrals, 1));
  s.codes = DeviceBuffer<int8_t>(static_cast<size_t>(s.capacity));
  s.norms = DeviceBuffer<float>(static_cast<size_t>(s.capacity));
  s.lists[0] = DeviceBuffer<Candidate>(static_cast<size_t>(s.capacity));
  s.lists[1] = DeviceBuffer<Candidate>(static_cast<size_t>(s.capacity));
  s.counts = DeviceBuffer<int>(8);
  s.blocksByThread = stagesResidentBlocks(true);
  s.blocksByWarp = stagesResidentBlocks(false);
}

FaceDetectorCuda::~FaceDetectorCuda() = default;

std::vector<Window> FaceDetectorCuda::detectRaw(const Image& image, StreamHandle stream) {
  State& s = *state_;
  if (image.width() != s.width || image.height() != s.height || image.format().depth != Depth::u8 || image.format().channels == 4)
    throw std::invalid_argument("face_detect: expected a u8x1 or u8x3 " + std::to_string(s.width) + "x" + std::to_string(s.height) + " image");
  if (s.levels.empty()) return {};  // smaller than the window
  const Image* source = &image;
  if (image.format().channels == 3) {
    if (s.grey.empty()) s.grey = Image({Depth::u8, 1}, s.width, s.height, MemoryKind::device);
    launchLuma(image.view<uint8_t>(), s.grey.view<uint8_t>(), stream);
    source = &s.grey;
  }
  const Image& grey = *source;
  PyramidArgs a{static_cast<const uint8_t*>(grey.data()), s.width, s.height, grey.pitch(), static_cast<int>(s.levels.size()), s.deviceGeometry.get(), s.tables.get(),
                s.pixels.get(), s.sums.get(), s.squares.get(), s.largestWidth, s.largestHeight, s.pixelTiles, s.windowTiles};
  CascadeArgs c{s.stumps.get(), s.stages.get(), s.cascade.width, s.cascade.height};
  PP_CUDA_CHECK(cudaMemsetAsync(s.counts.get(), 0, s.counts.bytes(), stream));
  launchPyramid(a, stream);
  launchFirstStage(c, a, s.mostCols, s.mostRows, s.codes.get(), s.norms.get(), s.lists[0].get(), s.counts.get(), s.capacity, stream);
  int stagesTotal = static_cast<int>(s.cascade.stages.size()), from = 1, list = 0, count = 0;
  for (int end : kStageGroupEnds) {
    if (from >= stagesTotal) break;
    int to = std::min(end, stagesTotal);
    bool byThread = count < kGroupsByThread;
    launchStages(c, a, from, to, s.lists[list].get(), s.counts.get() + count, s.lists[1 - list].get(), s.counts.get() + count + 1, s.capacity, byThread,
                 byThread ? s.blocksByThread : s.blocksByWarp, stream);
    from = to, list = 1 - list, ++count;
  }
  int found = 0;
  PP_CUDA_CHECK(cudaMemcpyAsync(&found, s.counts.get() + count, sizeof(int), cudaMemcpyDeviceToHost, stream));
  PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  found = std::min(found, s.capacity);
  std::vector<Candidate> candidates(static_cast<size_t>(found));
  if (found > 0) {
    PP_CUDA_CHECK(cudaMemcpyAsync(candidates.data(), s.lists[list].get(), candidates.size() * sizeof(Candidate), cudaMemcpyDeviceToHost, stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // The CPU reference's order: level by level, rows top to bottom.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& l, const Candidate& r) { return std::tie(l.level, l.y, l.x) < std::tie(r.level, r.y, r.x); });
  std::vector<Window> windows;
  for (const Candidate& w : candidates) windows.push_back(reportedWindow(s.cascade, s.levels[w.level].scale, w.x, w.y, s.width, s.height));
  return windows;
}

#else

struct FaceDetectorCuda::State {};
FaceDetectorCuda::FaceDetectorCuda(const Cascade&, const DetectParams& p, int, int) : p_(p) { throw std::logic_error("face_detect: this build has no CUDA"); }
FaceDetectorCuda::~FaceDetectorCuda() = default;
std::vector<Window> FaceDetectorCuda::detectRaw(const Image&, StreamHandle) { return {}; }

#endif

}  // namespace pp::faces
