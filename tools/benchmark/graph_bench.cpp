// tools/bench cases graph/*: the whole graph on the GPU, encoder excluded. A stereo pair of 2448x2048
// 8-bit colour polarization frames (the Aloe pair resized, a face in front) -> demosaic both ->
// rectify -> stereo_sgm (1224x1024, 128 disparities) -> faces with depth -> dof on the face ->
// compose the 2x2 view -> a sink that only counts. Frames are pipelined (3 in flight unless the
// case says otherwise). A case runs once (ms: all of it): 1000 frames as fast as the graph takes
// them, or 5 s of frames paced like a camera (24 frames/s, or the goal's 250); the note gives
// frames/s and device memory, and the metrics table (latency p50/p99, per-stage GPU time) goes to
// stdout; the JSON has each stage's mean GPU time (tools/jetson-projection projects them onto a
// Jetson). graph/config runs any config the same way (--config).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cuda/cuda_check.hpp"
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
  return "pipeline: {frames_in_flight: " + std::to_string(inFlight) +
         "}\n"
         "sources:\n"
         "  - name: cams\n    type: stereo_synth\n"
         "    params: {left: tests/data/stereo/aloeL.jpg, right: tests/data/stereo/aloeR.jpg, size: [1224, 1024], "
         "overlay: tests/data/pictures/messi5.jpg,\n"
         "             overlay_crop: [185, 45, 110, 125], overlay_at: [300, 80], overlay_disparity: 110, overlay_step: "
         "[3, 1], mosaic: polar_rggb, frames: 8, loop: true, fps: " +
         std::to_string(fps) +
         "}\n"
         "stages:\n"
         "  - {name: left, type: demosaic, inputs: {raw: cams.left}, params: {mosaic: polar_rggb, outputs: [s0, "
         "aolp_visual]}}\n"
         "  - {name: right, type: demosaic, inputs: {raw: cams.right}, params: {mosaic: polar_rggb, outputs: [s0]}}\n"
         "  - {name: rectified, type: rectify, inputs: {left: left.s0, right: right.s0}, params: {calibration: "
         "config/stereo-rig-calibration.yml}}\n"
         "  - {name: sgm, type: stereo_sgm, inputs: {left: rectified.left, right: rectified.right}, params: "
         "{disparities: 128, paths: " +
         std::to_string(paths) +
         ", calibration: config/stereo-rig-calibration.yml}}\n"
         "  - {name: faces, type: face_detect, inputs: {image: rectified.left, depth: sgm.depth}, params: {cascade: "
         "tests/data/cascades/haarcascade_frontalface_default.xml}}\n"
         "  - {name: portrait, type: dof, inputs: {image: rectified.left, depth: sgm.depth, faces: faces.faces}, "
         "params: {focus: faces, k: 3, r_max: 9}}\n"
         "  - name: view\n    type: compose\n"
         "    inputs: {a: portrait.image, b: sgm.disparity, c: left.aolp_visual, d: rectified.left, boxes: "
         "faces.faces}\n"
         "    params: {layout: grid2x2, colormaps: [none, turbo, none, none], max: [0, 2048, 0, 0]}\n"
         "sinks:\n  - {name: out, type: count, inputs: {view: view.image, faces: faces.faces}}\n";
}

// A config's graph as the bench runs it: its aravis cameras replaced by one stereo_synth source
// (the Aloe pair at 1224x1024 with a face in front, as 2448x2048 frames: the IMX250's size), the
// first camera's frames its left ones and the second's its right; each sink a counter of what it
// takes; face_detect's default cascade read from tests/data.
void makeRunnable(PipelineSpec& spec) {
  // yaml-cpp's Node assignment writes through to the node it refers to, so nodes are copied into a
  // new list and params rebound with reset(), never assigned.
  std::map<std::string, std::string> cameraPort;  // camera -> the synthetic source's output
  std::string mosaic = "polar_mono";
  for (const NodeSpec& n : spec.nodes)
    if (n.role == Role::source && n.type == "aravis") {
      if (cameraPort.empty() && n.params && n.params["mosaic"]) mosaic = n.params["mosaic"].as<std::string>();
      cameraPort[n.name] = cameraPort.size() % 2 == 0 ? "left" : "right";
    }
  const std::string synth = "bench_cameras";
  std::vector<NodeSpec> nodes;
  if (!cameraPort.empty()) {
    NodeSpec cams;
    cams.role = Role::source, cams.name = synth, cams.type = "stereo_synth", cams.keyPath = "sources." + synth;
    cams.params = YAML::Load(
        "{left: tests/data/stereo/aloeL.jpg, right: tests/data/stereo/aloeR.jpg, size: [1224, 1024], overlay: "
        "tests/data/pictures/messi5.jpg, "
        "overlay_crop: [185, 45, 110, 125], overlay_at: [300, 80], overlay_disparity: 110, overlay_step: [3, 1], "
        "frames: 8, loop: true}");
    for (const char* picture : {"left", "right", "overlay"})
      cams.params[picture] = std::filesystem::absolute(cams.params[picture].as<std::string>()).string();
    cams.params["mosaic"] = mosaic;
    nodes.push_back(cams);
  }
  for (const NodeSpec& n : spec.nodes) {
    if (cameraPort.count(n.name) > 0) continue;
    nodes.push_back(n);
    NodeSpec& copy = nodes.back();
    for (InputSpec& in : copy.inputs)
      if (auto it = cameraPort.find(in.from.node); it != cameraPort.end()) in.from = {synth, it->second};
    if (copy.role == Role::sink) copy.type = "count", copy.params.reset();
    // The default cascade from tests/data, where opencv-data (the default's home) is not installed.
    if (copy.type == "face_detect" && !(copy.params && copy.params["cascade"])) {
      YAML::Node params = copy.params ? YAML::Clone(copy.params) : YAML::Node(YAML::NodeType::Map);
      params["cascade"] = std::filesystem::absolute("tests/data/cascades/haarcascade_frontalface_default.xml").string();
      copy.params.reset(params);
    }
  }
  spec.nodes = std::move(nodes);
}

class GraphRun : public bench::Run {
 public:
  // The built-in graph (`paths`, camera rate `fps`, `inFlight`), or with `configPath` that config's.
  GraphRun(int paths, double fps, int inFlight, const std::string& configPath = "")
      : frames_(bench::options().frames > 0 ? static_cast<uint64_t>(bench::options().frames)
                : fps > 0                   ? static_cast<uint64_t>(fps * 5)
                                            : 1000) {
    if (!std::filesystem::exists("tests/data/stereo/aloeL.jpg"))
      throw std::runtime_error("graph/*: run from the repository root (tests/data is read)");
    registerAllNodes(registry_);
    registry_.add<CountSink>(Role::sink, "count", "counts frames");
    size_t freeBefore = 0, total = 0;
    PP_CUDA_CHECK(cudaMemGetInfo(&freeBefore, &total));
    Diagnostics d(configPath.empty() ? "graph-bench.yaml" : configPath);
    PipelineSpec spec = configPath.empty() ? parsePipeline(graphYaml(paths, fps, inFlight), "graph-bench.yaml", {}, d)
                                           : loadPipeline(configPath, {}, d);
    makeRunnable(spec);
    if (bench::options().framesInFlight > 0) spec.pipeline.framesInFlight = bench::options().framesInFlight;
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
    std::snprintf(text, sizeof text, "%.0f frames/s; device memory %.0f MB after build",
                  static_cast<double>(frames_) / seconds_, deviceMb_);
    return text;
  }
  std::vector<std::pair<std::string, double>> stageGpuMs() const override { return graph_->metrics().stageGpuMs(); }

 private:
  uint64_t frames_;
  Registry registry_;
  std::unique_ptr<Graph> graph_;
  double seconds_ = 0, deviceMb_ = 0;
};

[[maybe_unused]] const bool registered = [] {
  for (int paths : {8, 4})
    bench::registry().push_back({"graph/stereo-2448x2048-p" + std::to_string(paths),
                                 "the whole graph, 2448x2048 colour polarization stereo pair, SGM 1224x1024x128 with " +
                                     std::to_string(paths) + " paths, encoder excluded, as fast as it goes",
                                 true, [paths](bench::Size, int) { return std::make_unique<GraphRun>(paths, 0, 3); },
                                 true});
  bench::registry().push_back(
      {"graph/stereo-2448x2048-p8-2inflight",
       "the same with 8 paths and 2 frames in flight instead of 3: less queueing, as fast as it goes", true,
       [](bench::Size, int) { return std::make_unique<GraphRun>(8, 0, 2); }, true});
  bench::registry().push_back(
      {"graph/stereo-2448x2048-p4-250fps",
       "the same with 4 paths, the cameras delivering 250 frames/s (the throughput goal, paced), 5 s", true,
       [](bench::Size, int) { return std::make_unique<GraphRun>(4, 250, 3); }, true});
  bench::registry().push_back(
      {"graph/config",
       "the graph of --config FILE, its cameras made synthetic from the Aloe pair and its "
       "sinks counters, as fast as it goes",
       true, [](bench::Size, int) { return std::make_unique<GraphRun>(0, 0, 0, bench::options().config); }, true,
       true});
  bench::registry().push_back(
      {"graph/stereo-2448x2048-p8-24fps",
       "the same with 8 paths, the cameras delivering 24 frames/s (latency without queueing), 5 s", true,
       [](bench::Size, int) { return std::make_unique<GraphRun>(8, 24, 3); }, true});
  return true;
}();

}  // namespace
}  // namespace pp
