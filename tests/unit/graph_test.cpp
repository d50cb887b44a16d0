// The graph runtime: pipelining, allocation, drops, failures, metrics.
#include "pipeline/graph.hpp"

#include <mutex>
#include <thread>

#include "pipeline/image_io.hpp"
#include "stages/register.hpp"
#include "tests/graph_support.hpp"

#if POLARPIPE_WITH_HTTP
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace pp {
namespace {

// Frames whose pixels depend on the sequence number, so every frame differs.
struct PatternParams {
  int frames = 10, width = 33, height = 17;
  bool live = false;
};
class PatternSource : public Source {
 public:
  using Params = PatternParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>()
                              .add("frames", &Params::frames, "frames", intIn(0, 100000))
                              .add("width", &Params::width, "width", intIn(1, 4096))
                              .add("height", &Params::height, "height", intIn(1, 4096))
                              .add("live", &Params::live, "live");
    return s;
  }
  PatternSource(const Params& p, ParamContext&) : p_(p) {}
  void setup(PortSetup& ports) override { ports.output("image", PortSpec::image({Depth::u8, 1}, p_.width, p_.height)); }
  bool live() const override { return p_.live; }
  bool read(SourceFrame& frame, const std::function<bool()>&) override {
    if (produced_ == p_.frames) return false;
    auto v = frame.out("image").view<uint8_t>();
    for (int y = 0; y < v.height; ++y)
      for (int x = 0; x < v.width; ++x) v.at(x, y) = static_cast<uint8_t>(x * 7 + y * 3 + produced_ * 11);
    ++produced_;
    return true;
  }

 private:
  Params p_;
  int produced_ = 0;
};

// out = in + offset; optionally slow, or failing at one frame.
struct OffsetParams {
  int offset = 1, sleep_ms = 0, fail_at = -1;
};
class OffsetStage : public Stage {
 public:
  using Params = OffsetParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>()
                              .add("offset", &Params::offset, "offset", intIn(-255, 255))
                              .add("sleep_ms", &Params::sleep_ms, "sleep", intIn(0, 1000))
                              .add("fail_at", &Params::fail_at, "frame to fail at", intIn(-1, 1000000));
    return s;
  }
  OffsetStage(const Params& p, ParamContext&) : p_(p) {}
  std::string choices() const override {
    return p_.sleep_ms ? "sleeps " + std::to_string(p_.sleep_ms) + " ms a frame" : "";
  }
  void setup(PortSetup& ports) override {
    if (const PortSpec* in = ports.imageInput("in", {{Depth::u8, 1}})) ports.output("out", *in);
  }
  void process(ProcessContext& ctx) override {
    if (static_cast<int>(ctx.meta().sequence) == p_.fail_at) throw std::runtime_error("injected failure");
    if (p_.sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(p_.sleep_ms));
    auto in = ctx.in("in").view<uint8_t>();
    auto out = ctx.out("out").view<uint8_t>();
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) out.at(x, y) = static_cast<uint8_t>(in.at(x, y) + p_.offset);
  }

 private:
  Params p_;
};

Registry& testRegistry() {
  static Registry r = [] {
    Registry reg;
    registerAllNodes(reg);
    reg.add<PatternSource>(Role::source, "pattern", "test frames");
    reg.add<OffsetStage>(Role::stage, "offset", "test stage");
    reg.add<CollectSink>(Role::sink, "collect", "test sink");
    return reg;
  }();
  return r;
}

std::unique_ptr<Graph> build(const std::string& yaml, std::vector<std::string> overrides = {},
                             GraphOptions options = {"cpu", 0, false}) {
  Diagnostics d("test.yaml");
  PipelineSpec spec = parsePipeline(yaml, "test.yaml", overrides, d);
  std::unique_ptr<Graph> g;
  if (d.empty()) g = Graph::build(spec, testRegistry(), d, options);
  EXPECT_TRUE(d.empty()) << d.text();
  return g;
}

// Three stages: offset -> offset -> compose (mono to RGB).
const char* kThreeStages = R"(
pipeline: {frames_in_flight: 3}
sources:
  - {name: src, type: pattern, params: {frames: 12}}
stages:
  - {name: first, type: offset, inputs: {in: src.image}, params: {offset: 5, sleep_ms: 2}}
  - {name: second, type: offset, inputs: {in: first.out}, params: {offset: 100}}
  - {name: view, type: compose, inputs: {a: second.out}, params: {colormaps: [turbo]}}
sinks:
  - {name: out, type: collect, inputs: {in: view.image}, params: {key: KEY}}
)";

std::string withKey(const std::string& key) {
  std::string text = kThreeStages;
  text.replace(text.find("KEY"), 3, key);
  return text;
}

TEST(Graph, FramesInFlightGiveTheSameOutputsAsOneAtATime) {
  auto pipelined = build(withKey("pipelined"));
  auto serial = build(withKey("serial"), {"pipeline.frames_in_flight=1"});
  ASSERT_TRUE(pipelined && serial);
  pipelined->run();
  serial->run();
  auto& a = collected("pipelined");
  auto& b = collected("serial");
  ASSERT_EQ(a.frames.size(), 12u);
  ASSERT_EQ(b.frames.size(), 12u);
  for (size_t i = 0; i < a.frames.size(); ++i) {
    EXPECT_EQ(a.sequences[i], i) << "sinks see frames in order";
    EXPECT_TRUE(test::samePixels(a.frames[i], b.frames[i])) << "frame " << i;
  }
  EXPECT_FALSE(test::samePixels(a.frames[0], a.frames[1])) << "the frames differ, so the comparison means something";
}

// The description names each stage's backend and, where its setup chose something the parameters
// leave open (a CUDA layout), what.
TEST(Graph, TheDescriptionNamesWhatEachStageChose) {
  auto g = build(withKey("described"));
  ASSERT_TRUE(g);
  const std::string text = g->describe();
  EXPECT_NE(text.find("stage first (offset, cpu: sleeps 2 ms a frame) <- in=src.image"), std::string::npos) << text;
  EXPECT_NE(text.find("stage second (offset, cpu) <- in=first.out"), std::string::npos) << text;
}

TEST(Graph, AllocatesNoImageAfterItIsBuilt) {
  auto graph = build(withKey("alloc"), {"sources.src.params.frames=40", "sinks.out.params.keep=false"});
  ASSERT_TRUE(graph);
  uint64_t before = imageAllocations();
  graph->run();
  EXPECT_EQ(imageAllocations(), before);
  EXPECT_EQ(graph->metrics().framesDone(), 40u);
}

TEST(Graph, MaxFramesStopsEarly) {
  auto graph = build(withKey("max"), {"sources.src.params.frames=1000"}, {"cpu", 7, false});
  ASSERT_TRUE(graph);
  graph->run();
  EXPECT_EQ(collected("max").frames.size(), 7u);
}

TEST(Graph, FileSourcesLoseNothingWhenTheGraphIsSlow) {
  auto graph = build(withKey("slowfile"), {"stages.first.params.sleep_ms=10", "sources.src.params.frames=15"});
  ASSERT_TRUE(graph);
  graph->run();
  EXPECT_EQ(collected("slowfile").frames.size(), 15u);
  EXPECT_EQ(graph->metrics().drops(), 0u);
}

TEST(Graph, LiveSourcesDropTheOldestAndCountIt) {
  auto graph = build(withKey("live"), {"sources.src.params.live=true", "sources.src.params.frames=60",
                                       "stages.first.params.sleep_ms=5"});
  ASSERT_TRUE(graph);
  graph->run();
  auto& c = collected("live");
  EXPECT_GT(graph->metrics().drops(), 0u) << "a source far faster than the graph must drop";
  EXPECT_EQ(c.frames.size() + graph->metrics().drops(), 60u) << "every frame is either processed or counted as dropped";
  for (size_t i = 1; i < c.sequences.size(); ++i) EXPECT_LT(c.sequences[i - 1], c.sequences[i]);
  EXPECT_EQ(c.sequences.back(), 59u) << "the newest frame is kept";
}

TEST(Graph, AFailingStageStopsThePipelineNamingStageAndFrame) {
  auto graph = build(withKey("fail"), {"stages.second.params.fail_at=4"});
  ASSERT_TRUE(graph);
  try {
    graph->run();
    FAIL() << "the failure was not reported";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 'second' failed on frame 4: injected failure"), std::string::npos)
        << e.what();
  }
  auto& c = collected("fail");
  EXPECT_EQ(c.frames.size(), 4u) << "frames before the failure still reach the sinks";
}

TEST(Graph, StopFromAnotherThreadDrainsAndReturns) {
  auto graph = build(withKey("stop"), {"sources.src.params.frames=100000", "stages.first.params.sleep_ms=1"});
  ASSERT_TRUE(graph);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    graph->stop();
  });
  graph->run();
  stopper.join();
  auto& c = collected("stop");
  EXPECT_GT(c.frames.size(), 0u);
  EXPECT_LT(c.frames.size(), 100000u);
  EXPECT_EQ(c.frames.size(), graph->metrics().framesDone());
}

TEST(Metrics, PrometheusTextHasEveryStageAndSource) {
  auto graph = build(withKey("prom"));
  ASSERT_TRUE(graph);
  graph->run();
  std::string text = graph->metrics().prometheus();
  EXPECT_NE(text.find("polarpipe_frames_total 12"), std::string::npos) << text;
  EXPECT_NE(text.find("polarpipe_stage_frames_total{stage=\"second\"} 12"), std::string::npos) << text;
  EXPECT_NE(text.find("polarpipe_source_dropped_total{source=\"src\"} 0"), std::string::npos) << text;
  EXPECT_NE(graph->metrics().table().find("second"), std::string::npos);
}

#if POLARPIPE_WITH_HTTP
TEST(Metrics, ServedOverHttpOnLoopback) {
  Metrics metrics({{"s", Backend::cpu}}, {"cam"}, 3);
  metrics.recordFrame(5);
  MetricsServer server(metrics, "127.0.0.1", 0);
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("polarpipe_frames_total 1"), std::string::npos) << res->body;
  EXPECT_THROW(MetricsServer(metrics, "127.0.0.1", server.port()), std::runtime_error) << "a port in use is an error";
}

// Fifty connections that send nothing (a port scanner, a half-open client) must not hold a scrape:
// it is answered within the client's 5 s, where it once waited 29.5 s.
TEST(Metrics, AScrapeIsAnsweredBesideIdleConnections) {
  Metrics metrics({{"s", Backend::cpu}}, {"cam"}, 3);
  MetricsServer server(metrics, "127.0.0.1", 0);
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    idle.push_back(sock);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every idle connection accepted first
  httplib::Client client("127.0.0.1", server.port());
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  auto res = client.Get("/metrics");
  for (int sock : idle) close(sock);
  ASSERT_TRUE(res) << "no answer within 5 s beside 50 idle connections: " << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}
#endif

TEST(Distribution, PercentilesOfKnownSamples) {
  Distribution d;
  for (int i = 1; i <= 100; ++i) d.add(i);
  EXPECT_DOUBLE_EQ(d.mean(), 50.5);
  EXPECT_NEAR(d.percentile(50), 50.5, 0.51);
  EXPECT_NEAR(d.percentile(99), 99, 1.0);
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

TEST(ImagesSource, StereoPairsAreMatchedByFileName) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "left");
  std::filesystem::create_directories(dir.path() / "right");
  std::vector<Image> lefts, rights;
  for (const char* name : {"0001.png", "0002.png", "0003.png"}) {
    lefts.push_back(test::randomImage({Depth::u8, 1}, 12, 10));
    rights.push_back(test::randomImage({Depth::u8, 1}, 12, 10));
    writeImage(dir / (std::string("left/") + name), lefts.back());
    writeImage(dir / (std::string("right/") + name), rights.back());
  }
  std::string yaml = "sources:\n  - {name: cam, type: images, params: {left: '" + (dir / "left") + "', right: '" +
                     (dir / "right") +
                     "'}}\nsinks:\n  - {name: l, type: collect, inputs: {in: cam.left}, params: {key: stereo_l}}\n" +
                     "  - {name: r, type: collect, inputs: {in: cam.right}, params: {key: stereo_r}}\n";
  auto graph = build(yaml);
  ASSERT_TRUE(graph);
  graph->run();
  ASSERT_EQ(collected("stereo_l").frames.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(test::samePixels(collected("stereo_l").frames[i], lefts[i])) << i;
    EXPECT_TRUE(test::samePixels(collected("stereo_r").frames[i], rights[i])) << i;
  }
  std::filesystem::remove(dir.path() / "right/0002.png");
  Diagnostics d("stereo.yaml");
  PipelineSpec spec = parsePipeline(yaml, "stereo.yaml", {}, d);
  EXPECT_FALSE(Graph::build(spec, testRegistry(), d, {"cpu"}));
  EXPECT_NE(d.text().find("no right image named '0002.png'"), std::string::npos) << d.text();
}

TEST(ImagesSource, AFrameOfAnotherSizeStopsTheRunNamingTheFile) {
  test::TempDir dir;
  writeImage(dir / "a.png", test::randomImage({Depth::u8, 1}, 12, 10));
  writeImage(dir / "b.png", test::randomImage({Depth::u8, 1}, 14, 10));
  auto graph = build("sources:\n  - {name: cam, type: images, params: {path: '" + dir.path().string() +
                     "'}}\nsinks:\n  - {name: s, type: collect, inputs: {in: cam.image}, params: {key: sizes}}\n");
  ASSERT_TRUE(graph);
  try {
    graph->run();
    FAIL() << "a frame of another size was accepted";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("source 'cam' failed on frame 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("b.png: is 14x10"), std::string::npos) << e.what();
  }
  EXPECT_EQ(collected("sizes").frames.size(), 1u) << "the frame before the bad one still arrives";
}

}  // namespace
}  // namespace pp
