// The graph on a GPU: demosaic (CUDA) -> compose, pipelined on streams and events, gives the same
// frames as one at a time and as the CPU backend, and allocates nothing after it is built.
#include "pipeline/graph.hpp"
#include "pipeline/image_io.hpp"
#include "stages/demosaic/synth.hpp"
#include "stages/register.hpp"
#include "tests/graph_support.hpp"

namespace pp {
namespace {

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
                       "stages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.image}, params: {outputs: [s0, dolp, aolp_visual]}}\n" +
                       "  - {name: view, type: compose, inputs: {a: polar.s0, b: polar.aolp_visual}, params: {layout: side_by_side}}\n" +
                       "sinks:\n  - {name: out, type: collect, inputs: {in: view.image}, params: {key: " + key + "}}\n";
    Diagnostics d("gpu.yaml");
    PipelineSpec spec = parsePipeline(yaml, "gpu.yaml", {}, d);
    static Registry registry = [] {
      Registry r;
      registerAllNodes(r);
      r.add<CollectSink>(Role::sink, "collect", "test sink");
      return r;
    }();
    auto graph = Graph::build(spec, registry, d, {"", 0, false});
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
  EXPECT_EQ(imageAllocations() - before, 8u) << "the only image buffers allocated while running are the test sink's 8 copies";
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

}  // namespace
}  // namespace pp
