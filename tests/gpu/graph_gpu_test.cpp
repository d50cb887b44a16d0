// The graph on a GPU: demosaic (CUDA) -> compose, pipelined on streams and events, gives the same
// frames as one at a time and as the CPU backend, and allocates nothing after it is built; the
// whole demo graph, whose face detection waits for the device on a second scheduling thread, gives
// the same views and faces pipelined as one at a time, and built to validate holds no device memory.
#include <fstream>

#include <nlohmann/json.hpp>

#include "cuda/cuda_check.hpp"
#include "pipeline/graph.hpp"
#include "pipeline/image_io.hpp"
#include "stages/demosaic/synth.hpp"
#include "stages/register.hpp"
#include "tests/graph_support.hpp"

namespace pp {
namespace {

Registry& registry() {
  static Registry registry = [] {
    Registry r;
    registerAllNodes(r);
    r.add<CollectSink>(Role::sink, "collect", "test sink");
    return r;
  }();
  return registry;
}

class GpuGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
    Image picture = readImage(test::picture("fruits.jpg"));
    for (int i = 0; i < 8; ++i) {  // a moving AoLP field, so every frame differs
      demosaic::SynthOptions o;
      o.aolpOffset = 0.3 * i;
      char name[32];
      std::snprintf(name, sizeof name, "raw_%02d.pgm", i);
      writeImage(dir_ / name, demosaic::synthesize(picture, o).raw);
    }
  }

  std::unique_ptr<Graph> build(const std::string& key, const std::string& backend, int inFlight) {
    std::string yaml = "pipeline: {frames_in_flight: " + std::to_string(inFlight) + ", backend: " + backend + "}\n" +
                       "sources:\n  - {name: cam, type: images, params: {path: '" + dir_.path().string() + "'}}\n" +
                       "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.image}, params: {outputs: [s0, "
                       "dolp, aolp_visual]}}\n" +
                       "  - {name: view, type: compose, inputs: {a: polar.s0, b: polar.aolp_visual}, params: {layout: "
                       "side_by_side}}\n" +
                       "sinks:\n  - {name: out, type: collect, inputs: {in: view.image}, params: {key: " + key + "}}\n";
    Diagnostics d("gpu.yaml");
    PipelineSpec spec = parsePipeline(yaml, "gpu.yaml", {}, d);
    auto graph = Graph::build(spec, registry(), d, {"", 0, false});
    EXPECT_TRUE(graph) << d.text();
    return graph;
  }

  // The demo's graph on the CUDA backends (collected under `key`, faces to key.jsonl), built to run
  // or, with Devices::none, as validate builds it.
  std::unique_ptr<Graph> buildDemo(const std::string& key, int inFlight,
                                   PortSetup::Devices devices = PortSetup::Devices::use) {
    std::string data = (test::sourceDir() / "tests/data").string() + "/",
                config = (test::sourceDir() / "config").string() + "/";
    std::string yaml =
        "pipeline: {frames_in_flight: " + std::to_string(inFlight) +
        ", backend: cuda}\n"
        "sources:\n  - name: cams\n    type: stereo_synth\n"
        "    params: {left: " +
        data + "stereo/aloeL.jpg, right: " + data + "stereo/aloeR.jpg, downscale: 2, overlay: " + data +
        "pictures/messi5.jpg,\n"
        "             overlay_crop: [185, 45, 110, 125], overlay_at: [150, 40], overlay_disparity: 115, overlay_step: "
        "[4, 2], mosaic: polar_mono, frames: 6}\n"
        "stages:\n"
        "  - {name: left, type: demosaic, inputs: {raw: cams.left}, params: {mosaic: polar_mono, outputs: [s0, "
        "aolp_visual]}}\n"
        "  - {name: right, type: demosaic, inputs: {raw: cams.right}, params: {mosaic: polar_mono, outputs: [s0]}}\n"
        "  - {name: rectified, type: rectify, inputs: {left: left.s0, right: right.s0}, params: {calibration: " +
        config +
        "demo-calibration.yml}}\n"
        "  - {name: sgm, type: stereo_sgm, inputs: {left: rectified.left, right: rectified.right}, params: "
        "{disparities: 128, calibration: " +
        config +
        "demo-calibration.yml}}\n"
        "  - {name: faces, type: face_detect, inputs: {image: rectified.left, depth: sgm.depth}, params: {cascade: " +
        data +
        "cascades/haarcascade_frontalface_default.xml}}\n"
        "  - {name: portrait, type: dof, inputs: {image: rectified.left, depth: sgm.depth, faces: faces.faces}, "
        "params: {focus: faces, k: 3, r_max: 9}}\n"
        "  - {name: view, type: compose, inputs: {a: portrait.image, b: sgm.disparity, boxes: faces.faces}, params: "
        "{layout: side_by_side, colormaps: [none, turbo], max: [0, 2048]}}\n"
        "sinks:\n  - {name: out, type: collect, inputs: {in: view.image}, params: {key: " +
        key +
        "}}\n"
        "  - {name: boxes, type: detections, inputs: {faces: faces.faces}, params: {path: " +
        std::string(dir_ / (key + ".jsonl")) + "}}\n";
    Diagnostics d("demo.yaml");
    PipelineSpec spec = parsePipeline(yaml, "demo.yaml", {}, d);
    auto graph = d.empty() ? Graph::build(spec, registry(), d, {"", 0, false, devices}) : nullptr;
    EXPECT_TRUE(graph) << d.text();
    return graph;
  }

  test::TempDir dir_;
};

TEST_F(GpuGraph, PipelinedCudaMatchesSerialCudaAndTheCpuBackend) {
  auto pipelined = build("cuda3", "cuda", 3), serial = build("cuda1", "cuda", 1), cpu = build("cpu", "cpu", 1);
  ASSERT_TRUE(pipelined && serial && cpu);
  EXPECT_NE(pipelined->describe().find("demosaic, cuda"), std::string::npos) << pipelined->describe();
  uint64_t before = imageAllocations();
  pipelined->run();
  EXPECT_EQ(imageAllocations() - before, 8u)
      << "the only image buffers allocated while running are the test sink's 8 copies";
  serial->run();
  cpu->run();
  auto &a = collected("cuda3"), &b = collected("cuda1"), &c = collected("cpu");
  ASSERT_EQ(a.frames.size(), 8u);
  ASSERT_EQ(b.frames.size(), 8u);
  ASSERT_EQ(c.frames.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_TRUE(test::samePixels(a.frames[i], b.frames[i])) << "frame " << i;
    auto ga = a.frames[i].view<uint8_t>(), gc = c.frames[i].view<uint8_t>();
    int worst = 0;
    for (int y = 0; y < ga.height; ++y)
      for (int x = 0; x < ga.width * 3; ++x) worst = std::max(worst, std::abs(ga.row(y)[x] - gc.row(y)[x]));
    EXPECT_LE(worst, 1) << "frame " << i << ": CUDA and CPU within 1";
  }
  EXPECT_FALSE(test::samePixels(a.frames[0], a.frames[1]));
  EXPECT_GT(pipelined->metrics().prometheus().find("polarpipe_stage_gpu_ms_sum{stage=\"polar\"}"), 0u);
}

// Each frame's faces (box and depth) from a detections file; the arrival times differ run to run.
std::vector<nlohmann::json> facesByFrame(const std::filesystem::path& jsonl) {
  std::vector<nlohmann::json> frames;
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);) frames.push_back(nlohmann::json::parse(line).at("faces"));
  return frames;
}

TEST_F(GpuGraph, WholeDemoGraphPipelinedMatchesOneFrameAtATime) {
  auto pipelined = buildDemo("demo3", 3), serial = buildDemo("demo1", 1);
  ASSERT_TRUE(pipelined && serial);
  pipelined->run();
  serial->run();
  auto &a = collected("demo3"), &b = collected("demo1");
  ASSERT_EQ(a.frames.size(), 6u);
  ASSERT_EQ(b.frames.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_TRUE(test::samePixels(a.frames[i], b.frames[i])) << "view of frame " << i;
  auto facesA = facesByFrame(dir_ / "demo3.jsonl"), facesB = facesByFrame(dir_ / "demo1.jsonl");
  ASSERT_EQ(facesA.size(), 6u);
  EXPECT_EQ(facesA, facesB);
  for (const auto& faces : facesA) {  // the overlaid face among them, at 1870 / (6.25 * 115) = 2.60 m
    bool found = false;
    for (const auto& face : faces)
      found = found || (face.contains("depth") && std::abs(face["depth"].get<double>() - 2.60) < 0.15);
    EXPECT_TRUE(found) << faces.dump();
  }
}

// Built to validate, the demo's graph names the matcher's layout but holds no device memory (on a
// Jetson it shares the memory of the pipeline that may be running): built to run, it holds the SGM
// volume (641x555x128 16-bit words, 87 MiB), the faces' scratch and the pools.
TEST_F(GpuGraph, ADemoGraphBuiltToValidateHoldsNoDeviceMemory) {
  auto freeBytes = [] {
    size_t free = 0, total = 0;
    PP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<long long>(free);
  };
  buildDemo("warm", 1, PortSetup::Devices::none);  // the context and the modules loaded once
  const long long before = freeBytes();
  auto validated = buildDemo("validated", 1, PortSetup::Devices::none);
  ASSERT_TRUE(validated);
  const long long afterValidate = freeBytes();
  EXPECT_NE(validated->describe().find("stage sgm (stereo_sgm, cuda: the "), std::string::npos)
      << validated->describe();
  auto built = buildDemo("built", 1);
  ASSERT_TRUE(built);
  const long long afterBuild = freeBytes();
  EXPECT_LT(before - afterValidate, 8ll << 20) << "device memory taken by a graph built to validate";
  EXPECT_GT(afterValidate - afterBuild, 64ll << 20) << "device memory taken by the graph built to run";
}

}  // namespace
}  // namespace pp
