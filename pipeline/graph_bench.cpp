// tools/bench cases graph/*: the whole graph on the GPU, encoder excluded. A stereo pair of 2448x2048
// 8-bit colour polarization frames (the Aloe pair resized, a face in front) -> demosaic both ->
// rectify -> stereo_sgm (1224x1024, 128 disparities) -> faces with depth -> dof on the face ->
// compose the 2x2 view -> a sink that only counts. Frames are pipelined (3 in flight unless the
// case says otherwise). A case runs once (ms: all of it): 1000 frames as fast as the graph takes
// them, or 5 s of frames paced like a camera (24 frames/s, or the goal's 250); the note gives
// frames/s and device memory, and the metrics table (latency p50/p99, per-stage GPU time) goes to
// stdout. Bytes per frame: each stage's inputs and outputs read or written once, SGM with its
// volume traffic; the Orin and Xavier floors are those bytes over 204.8 and 137 GB/s.
#include <cstdio>
#include <filesystem>

#include "pipeline/cuda_check.hpp"
#include "pipeline/graph.hpp"
#include "stages/register.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp {
namespace {

struct CountParams {};
class CountSink : public Sink {
 public:
  using Params = CountParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>();
    return s;
  }
  CountSink(const Params&, ParamContext&) {}
  void setup(PortSetup& ports) override {
    for (const auto& name : ports.connectedInputs()) ports.input(name);
  }
  void consume(const SinkFrame&) override {}
};

std::string graphYaml(int paths, double fps, int inFlight) {
  return "pipeline: {frames_in_flight: " + std::to_string(inFlight) + "}\n"
         "sources:\n"
         "  - name: cams\n    type: stereo_synth\n"
         "    params: {left: tests/data/stereo/aloeL.jpg, right: tests/data/stereo/aloeR.jpg, size: [1224, 1024], overlay: tests/data/pictures/messi5.jpg,\n"
         "             overlay_crop: [185, 45, 110, 125], overlay_at: [300, 80], overlay_disparity: 110, overlay_step: [3, 1], mosaic: polar_rggb, frames: 8, loop: true, fps: " + std::to_string(fps) + "}\n"
         "stages:\n"
         "  - {name: left, type: demosaic, inputs: {raw: cams.left}, params: {mosaic: polar_rggb, outputs: [s0, aolp_visual]}}\n"
         "  - {name: right, type: demosaic, inputs: {raw: cams.right}, params: {mosaic: polar_rggb, outputs: [s0]}}\n"
         "  - {name: rectified, type: rectify, inputs: {left: left.s0, right: right.s0}, params: {calibration: config/stereo-rig-calibration.yml}}\n"
         "  - {name: sgm, type: stereo_sgm, inputs: {left: rectified.left, right: rectified.right}, params: {disparities: 128, paths: " +
         std::to_string(paths) +
         ", calibration: config/stereo-rig-calibration.yml}}\n"
         "  - {name: faces, type: face_detect, inputs: {image: rectified.left, depth: sgm.depth}, params: {cascade: tests/data/cascades/haarcascade_frontalface_default.xml}}\n"
         "  - {name: portrait, type: dof, inputs: {image: rectified.left, depth: sgm.depth, faces: faces.faces}, params: {focus: faces, k: 3, r_max: 9}}\n"
         "  - name: view\n    type: compose\n"
         "    inputs: {a: portrait.image, b: sgm.disparity, c: left.aolp_visual, d: rectified.left, boxes: faces.faces}\n"
         "    params: {layout: grid2x2, colormaps: [none, turbo, none, none], max: [0, 2048, 0, 0]}\n"
         "sinks:\n  - {name: out, type: count, inputs: {view: view.image, faces: faces.faces}}\n";
}

// Bytes each stage reads and writes once per frame (W x H the S0 size, D disparities, P paths).
std::string byteBudget(int w, int h, int d, int paths) {
  double px = static_cast<double>(w) * h, levels = 1 / (1 - 1 / 1.21);  // the face pyramid: about 5.8 images
  struct Part {
    const char* stage;
    double bytes;
  } parts[] = {
      {"demosaic x2", 2 * (4 * px + 3 * px) + 3 * px},
      {"rectify", 2 * (3 + 8 + 3) * px},
      {"stereo_sgm", 2 * (3 + 4 + 1) * px + px * d * 2.0 * (2 * paths + 2) + 2 * px + 4 * px},
      {"face_detect", 1 * px + levels * px * (1 + 4 + 4)},
      {"dof", (3 + 4 + 3) * px},
      {"compose", (3 + 2 + 3 + 3) * px + 4 * px * 3},
  };
  double total = 0;
  std::string text;
  for (const Part& p : parts) {
    total += p.bytes;
    char line[128];
    std::snprintf(line, sizeof line, "%s %.0f MB, ", p.stage, p.bytes / 1e6);
    text += line;
  }
  char line[160];
  std::snprintf(line, sizeof line, "total %.0f MB a frame: floor %.1f ms on AGX Orin (204.8 GB/s), %.1f ms on AGX Xavier (137 GB/s)", total / 1e6,
                total / 204.8e9 * 1e3, total / 137e9 * 1e3);
  return text + line;
}

class GraphRun : public bench::Run {
 public:
  GraphRun(int paths, double fps, int inFlight) : paths_(paths), frames_(fps > 0 ? static_cast<uint64_t>(fps * 5) : 1000) {
    if (!std::filesystem::exists("tests/data/stereo/aloeL.jpg")) throw std::runtime_error("graph/*: run from the repository root (tests/data is read)");
    registerAllNodes(registry_);
    registry_.add<CountSink>(Role::sink, "count", "counts frames");
    size_t freeBefore = 0, total = 0;
    PP_CUDA_CHECK(cudaMemGetInfo(&freeBefore, &total));
    Diagnostics d("graph-bench.yaml");
    PipelineSpec spec = parsePipeline(graphYaml(paths, fps, inFlight), "graph-bench.yaml", {}, d);
    if (d.empty()) graph_ = Graph::build(spec, registry_, d, {"cuda", frames_, false});
    if (!graph_) throw std::runtime_error(d.text());
    size_t freeAfter = 0;
    PP_CUDA_CHECK(cudaMemGetInfo(&freeAfter, &total));
    deviceMb_ = static_cast<double>(freeBefore - freeAfter) / 1e6;
  }
  void iterate(int, StreamHandle) override {
    auto start = Clock::now();
    graph_->run();
    seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("\n%s", graph_->metrics().table().c_str());
    std::fflush(stdout);
  }
  double bytesMoved() const override { return 0; }
  double pixels() const override { return 2448.0 * 2048 * 2 * static_cast<double>(frames_); }
  std::string note() const override {
    char text[160];
    std::snprintf(text, sizeof text, "%.0f frames/s; device memory %.0f MB after build; ", static_cast<double>(frames_) / seconds_, deviceMb_);
    return text + byteBudget(1224, 1024, 128, paths_);
  }

 private:
  int paths_;
  uint64_t frames_;
  Registry registry_;
  std::unique_ptr<Graph> graph_;
  double seconds_ = 0, deviceMb_ = 0;
};

[[maybe_unused]] const bool registered = [] {
  for (int paths : {8, 4})
    bench::registry().push_back({"graph/stereo-2448x2048-p" + std::to_string(paths),
                                 "the whole graph, 2448x2048 colour polarization stereo pair, SGM 1224x1024x128 with " + std::to_string(paths) + " paths, encoder excluded, as fast as it goes", true,
                                 [paths](bench::Size, int) { return std::make_unique<GraphRun>(paths, 0, 3); }, true});
  bench::registry().push_back({"graph/stereo-2448x2048-p8-2inflight", "the same with 8 paths and 2 frames in flight instead of 3: less queueing, as fast as it goes", true,
                               [](bench::Size, int) { return std::make_unique<GraphRun>(8, 0, 2); }, true});
  bench::registry().push_back({"graph/stereo-2448x2048-p4-250fps", "the same with 4 paths, the cameras delivering 250 frames/s (the throughput goal, paced), 5 s", true,
                               [](bench::Size, int) { return std::make_unique<GraphRun>(4, 250, 3); }, true});
  bench::registry().push_back({"graph/stereo-2448x2048-p8-24fps", "the same with 8 paths, the cameras delivering 24 frames/s (latency without queueing), 5 s", true,
                               [](bench::Size, int) { return std::make_unique<GraphRun>(8, 24, 3); }, true});
  return true;
}();

}  // namespace
}  // namespace pp
