// GStreamer outputs on loopback: RTSP to real rtspsrc clients, MP4 files that decode, raw
// recording and replay (bit-identical frames and metadata, damaged files), and clear errors.
#include <arpa/inet.h>
#include <gst/app/gstappsink.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/video/video.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "pipeline/graph.hpp"
#include "pipeline/gst/gst_support.hpp"
#include "pipeline/image_io.hpp"
#include "stages/register.hpp"
#include "tests/graph_support.hpp"
#include "tests/process_support.hpp"

namespace pp {
namespace {

// Random frames (u8 or u16, one or two planes) with every metadata field set, differing per frame.
struct StampedParams {
  int frames = 10, width = 64, height = 48, bits = 8, planes = 1, fps = 0;
  bool live = false;
};
class StampedSource : public Source {
 public:
  using Params = StampedParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>()
                              .add("frames", &Params::frames, "frames; 0: endless", intIn(0, 100000))
                              .add("width", &Params::width, "width", intIn(1, 4096))
                              .add("height", &Params::height, "height", intIn(1, 4096))
                              .add("bits", &Params::bits, "8 or 16", intIn(8, 16))
                              .add("planes", &Params::planes, "1 (raw) or 2 (left, right)", intIn(1, 2))
                              .add("fps", &Params::fps, "0: as fast as taken", intIn(0, 1000))
                              .add("live", &Params::live, "live");
    return s;
  }
  StampedSource(const Params& p, ParamContext&) : p_(p) {}
  std::vector<std::string> ports() const {
    return p_.planes == 1 ? std::vector<std::string>{"raw"} : std::vector<std::string>{"left", "right"};
  }
  void setup(PortSetup& ports) override {
    for (const auto& port : this->ports())
      ports.output(port, PortSpec::image({p_.bits == 8 ? Depth::u8 : Depth::u16, 1}, p_.width, p_.height));
  }
  bool live() const override { return p_.live; }
  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    if (p_.frames && produced_ == p_.frames) return false;
    if (p_.fps) std::this_thread::sleep_for(std::chrono::microseconds(1000000 / p_.fps));
    if (stopping()) return false;
    for (const auto& port : ports()) {
      Image random = test::randomImage(frame.out(port).format(), p_.width, p_.height);
      copyImage(random, frame.out(port), nullptr);
    }
    FrameMeta& m = frame.meta();
    m.cameraTimestampNs = 1'000'000'000ull * 3600 + static_cast<uint64_t>(produced_) * 41'666'667ull;
    m.exposureUs = 5000.25 + produced_;
    m.gain = 1.5 * produced_;
    m.mosaic = "polar_rggb";
    m.bitDepth = p_.bits == 8 ? 8 : 12;
    m.incomplete = produced_ % 3 == 1;
    ++produced_;
    return true;
  }

 private:
  Params p_;
  int produced_ = 0;
};

// A moving bright bar on RGB frames, so decoded video changes from frame to frame.
struct MovingParams {
  int width = 320, height = 240, fps = 60;
  bool noise = false;  // grain on every pixel: the encoder's full bit rate
};
class MovingSource : public Source {
 public:
  using Params = MovingParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>()
                              .add("width", &Params::width, "w", intIn(2, 4096))
                              .add("height", &Params::height, "h", intIn(2, 4096))
                              .add("fps", &Params::fps, "fps", intIn(1, 1000))
                              .add("noise", &Params::noise, "grain");
    return s;
  }
  MovingSource(const Params& p, ParamContext&) : p_(p) {}
  void setup(PortSetup& ports) override { ports.output("image", PortSpec::image({Depth::u8, 3}, p_.width, p_.height)); }
  bool live() const override { return true; }
  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    std::this_thread::sleep_for(std::chrono::microseconds(1000000 / p_.fps));
    if (stopping()) return false;
    auto v = frame.out("image").view<uint8_t>();
    int bar = (n_++ * 8) % p_.width;
    for (int y = 0; y < v.height; ++y)
      for (int x = 0; x < v.width; ++x)
        for (int c = 0; c < 3; ++c)
          v.at(x, y, c) = static_cast<uint8_t>((std::abs(x - bar) < 16 ? 200 : 20) + (p_.noise ? grain_() % 48 : 0));
    return true;
  }

 private:
  Params p_;
  int n_ = 0;
  std::minstd_rand grain_{1};
};

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    registerAllNodes(reg);
    reg.add<StampedSource>(Role::source, "stamped", "test frames with metadata");
    reg.add<MovingSource>(Role::source, "moving", "a moving bar");
    reg.add<KeepSink>(Role::sink, "keep", "keeps frames");
    return reg;
  }();
  return r;
}

std::string recordYaml(const std::string& path, int frames, int bits, int planes) {
  std::string inputs = planes == 1 ? "{raw: cam.raw}" : "{left: cam.left, right: cam.right}";
  return "sources: [{name: cam, type: stamped, params: {frames: " + std::to_string(frames) +
         ", bits: " + std::to_string(bits) + ", planes: " + std::to_string(planes) +
         ", width: 70, height: 50}}]\n"
         "sinks:\n  - {name: rec, type: record, inputs: " +
         inputs + ", params: {path: '" + path +
         "'}}\n"
         "  - {name: keep, type: keep, inputs: " +
         inputs + ", params: {key: original}}\n";
}

std::string replayYaml(const std::string& path, const std::string& key, const std::string& extra = "", int planes = 1) {
  std::string inputs = planes == 1 ? "{raw: cam.raw}" : "{left: cam.left, right: cam.right}";
  return "sources: [{name: cam, type: replay, params: {path: '" + path + "', pace: fast" + extra +
         "}}]\n"
         "sinks: [{name: keep, type: keep, inputs: " +
         inputs + ", params: {key: " + key + "}}]\n";
}

void expectSameFrames(Kept& a, Kept& b, size_t offset = 0) {
  for (size_t i = 0; i < b.metas.size(); ++i) {
    const FrameMeta &x = a.metas[i + offset], &y = b.metas[i];
    EXPECT_EQ(x.sequence, y.sequence) << "frame " << i;
    EXPECT_EQ(x.cameraTimestampNs, y.cameraTimestampNs) << "frame " << i;
    EXPECT_EQ(x.exposureUs, y.exposureUs) << "frame " << i;
    EXPECT_EQ(x.gain, y.gain) << "frame " << i;
    EXPECT_EQ(x.mosaic, y.mosaic) << "frame " << i;
    EXPECT_EQ(x.bitDepth, y.bitDepth) << "frame " << i;
    EXPECT_EQ(x.incomplete, y.incomplete) << "frame " << i;
    ASSERT_EQ(a.planes[i + offset].size(), b.planes[i].size());
    for (const auto& [port, image] : a.planes[i + offset])
      EXPECT_TRUE(test::samePixels(image, b.planes[i].at(port))) << "frame " << i << " plane " << port;
  }
}

class Recording : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Recording, ReplayGivesTheSameFramesAndMetadataEveryTime) {
  auto [bits, planes] = GetParam();
  test::TempDir dir;
  auto recorder = buildGraph(registry(), recordYaml(dir / "rec.mkv", 12, bits, planes));
  ASSERT_TRUE(recorder);
  recorder->run();
  for (const char* key : {"first", "second"}) {
    auto replay = buildGraph(registry(), replayYaml(dir / "rec.mkv", key, "", planes));
    ASSERT_TRUE(replay);
    replay->run();
    ASSERT_EQ(kept(key).metas.size(), 12u);
    expectSameFrames(kept("original"), kept(key));
  }
}

INSTANTIATE_TEST_SUITE_P(BitsAndPlanes, Recording,
                         ::testing::Values(std::make_tuple(8, 1), std::make_tuple(16, 1), std::make_tuple(8, 2)));

TEST(Replay, StartsAtAFrameAndLoops) {
  test::TempDir dir;
  auto recorder = buildGraph(registry(), recordYaml(dir / "rec.mkv", 6, 8, 1));
  ASSERT_TRUE(recorder);
  recorder->run();
  auto replay = buildGraph(registry(), replayYaml(dir / "rec.mkv", "loop", ", start: 4, loop: true"), 6);
  ASSERT_TRUE(replay);
  replay->run();
  Kept& k = kept("loop");
  ASSERT_EQ(k.metas.size(), 6u);
  std::vector<uint64_t> sequences;
  for (const auto& m : k.metas) sequences.push_back(m.sequence);
  EXPECT_EQ(sequences, (std::vector<uint64_t>{4, 5, 4, 5, 4, 5}));
  EXPECT_TRUE(test::samePixels(k.planes[0].at("raw"), kept("original").planes[4].at("raw")));
}

TEST(Replay, RecordedPaceKeepsTheTimeBetweenFrames) {
  test::TempDir dir;
  std::string yaml = recordYaml(dir / "rec.mkv", 6, 8, 1);
  yaml.replace(yaml.find("frames: 6"), 9, "frames: 6, fps: 20");
  auto recorder = buildGraph(registry(), yaml);
  ASSERT_TRUE(recorder);
  recorder->run();
  std::string replayText = replayYaml(dir / "rec.mkv", "paced");
  replayText.replace(replayText.find("pace: fast"), 10, "pace: recorded");
  auto replay = buildGraph(registry(), replayText);
  ASSERT_TRUE(replay);
  auto start = Clock::now();
  replay->run();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(seconds, 5 * 0.05 * 0.8) << "six frames 50 ms apart take at least 0.25 s";
  EXPECT_EQ(kept("paced").metas.size(), 6u);
}

// Replays a damaged copy: the intact frames come through, then the run fails naming the frame.
void expectDamage(const std::string& path, const std::string& key, size_t minFrames, size_t maxFrames,
                  const std::string& why) {
  auto replay = buildGraph(registry(), replayYaml(path, key));
  ASSERT_TRUE(replay);
  try {
    replay->run();
    FAIL() << "a damaged recording replayed without an error";
  } catch (const PipelineError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_NE(message.find("frame " + std::to_string(kept(key).metas.size())), std::string::npos) << message;
  }
  Kept& k = kept(key);
  EXPECT_GE(k.metas.size(), minFrames);
  EXPECT_LE(k.metas.size(), maxFrames);
  expectSameFrames(kept("original"), k);
}

TEST(Replay, TruncatedAndCorruptFilesStopWithTheFrameNumber) {
  test::TempDir dir;
  auto recorder = buildGraph(registry(), recordYaml(dir / "rec.mkv", 20, 8, 1));
  ASSERT_TRUE(recorder);
  recorder->run();
  std::ifstream in(dir / "rec.mkv", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(bytes.size(), 20u * 70 * 50);

  std::ofstream(dir / "truncated.mkv", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  expectDamage(dir / "truncated.mkv", "truncated", 8, 10, "truncated");

  std::string corrupt = bytes;
  for (size_t i = corrupt.size() * 3 / 4; i < corrupt.size() * 3 / 4 + 40; ++i)
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  std::ofstream(dir / "corrupt.mkv", std::ios::binary)
      .write(corrupt.data(), static_cast<std::streamsize>(corrupt.size()));
  expectDamage(dir / "corrupt.mkv", "corrupt", 13, 16, "checksum");

  // Zeros over the Matroska structure in the middle: the demuxer stops there, with the rest of the
  // file unread. Damaged, not truncated.
  std::string zeroed = bytes;
  std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>(zeroed.size() / 2),
            zeroed.begin() + static_cast<std::ptrdiff_t>(zeroed.size() / 2 + 8192), '\0');
  std::ofstream(dir / "zeroed.mkv", std::ios::binary).write(zeroed.data(), static_cast<std::streamsize>(zeroed.size()));
  expectDamage(dir / "zeroed.mkv", "zeroed", 5, 12, "damaged");
}

TEST(Replay, AFileThatIsNotARecordingIsAConfigError) {
  test::TempDir dir;
  std::ofstream(dir / "text.mkv") << "not matroska at all\n";
  Diagnostics d("test.yaml");
  auto graph = buildGraph(registry(), replayYaml(dir / "text.mkv", "none"), d);
  EXPECT_FALSE(graph);
  EXPECT_NE(d.text().find("text.mkv"), std::string::npos) << d.text();
}

TEST(Record, RefusesToReplaceAFileUnlessTold) {
  test::TempDir dir;
  std::ofstream(dir / "rec.mkv") << "keep me";
  Diagnostics d("test.yaml");
  EXPECT_FALSE(buildGraph(registry(), recordYaml(dir / "rec.mkv", 1, 8, 1), d));
  EXPECT_NE(d.text().find("overwrite: true"), std::string::npos) << d.text();
}

// Decodes a file or stream with a launch description ending in `appsink name=out`.
struct Decoded {
  int frames = 0, width = 0, height = 0;
  std::vector<std::vector<uint8_t>> samples;  // first row of each frame
};

std::string h264Decoder() { return gst::hasElement("avdec_h264") ? "avdec_h264" : "openh264dec"; }

TEST(Video, Mp4DecodesToTheFramesThatWereSent) {
  test::TempDir dir;
  auto graph = buildGraph(registry(),
                          "sources: [{name: cam, type: moving, params: {width: 160, height: 120, fps: 200}}]\n"
                          "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {mp4: '" +
                              dir / "view.mp4" + "', queue_frames: 64}}]\n",
                          40);
  ASSERT_TRUE(graph);
  graph->run();
  auto decode = gst::parsePipeline("filesrc location=" + dir / "view.mp4" + " ! qtdemux ! h264parse ! " +
                                   h264Decoder() + " ! appsink name=out sync=false");
  gst::Owned<GstElement> out(gst_bin_get_by_name(GST_BIN(decode.get()), "out"));
  gst_element_set_state(decode.get(), GST_STATE_PLAYING);
  int frames = 0;
  while (gst::OwnedSample sample{gst_app_sink_try_pull_sample(GST_APP_SINK(out.get()), 5 * GST_SECOND)}) {
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(sample.get())));
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), 160);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), 120);
    ++frames;
  }
  gst_element_set_state(decode.get(), GST_STATE_NULL);
  std::string table = graph->metrics().table();
  ASSERT_NE(table.find("video_dropped 0"), std::string::npos) << "with a deep queue no frame is dropped: " << table;
  EXPECT_EQ(frames, 40);
}

int decodedFrames(const std::string& mp4) {
  auto decode = gst::parsePipeline("filesrc location=" + mp4 + " ! qtdemux ! h264parse ! " + h264Decoder() +
                                   " ! appsink name=out sync=false");
  gst::Owned<GstElement> out(gst_bin_get_by_name(GST_BIN(decode.get()), "out"));
  gst_element_set_state(decode.get(), GST_STATE_PLAYING);
  int frames = 0;
  while (gst::OwnedSample sample{gst_app_sink_try_pull_sample(GST_APP_SINK(out.get()), 5 * GST_SECOND)}) ++frames;
  gst_element_set_state(decode.get(), GST_STATE_NULL);
  return frames;
}

// Ctrl-C on `polarpipe run config/preview-record.yaml`: the MP4 part and the raw recording are
// finalised (the MP4 decodes, the recording replays to its end record).
TEST(Video, SigintFinalisesTheMp4AndTheRecording) {
  test::TempDir dir;
  Child run =
      spawn({binary(), "run", (test::sourceDir() / "config/preview-record.yaml").string(), "--backend", "cpu", "--set",
             "sinks.preview.params.rtsp_port=-1", "--set", "sinks.preview.params.mp4=" + dir / "part_%03d.mp4", "--set",
             "sinks.raw.params.path=" + dir / "raw.mkv"},
            dir);
  // Running once the recording has frames (a sanitizer build takes seconds to start), then a while.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(std::filesystem::exists(dir / "raw.mkv") && std::filesystem::file_size(dir / "raw.mkv") > 100000) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(run.pid, SIGINT);
  EXPECT_EQ(waitFor(run, std::chrono::seconds(60)), 0);
  EXPECT_GT(decodedFrames(dir / "part_000.mp4"), 0) << "the MP4 was finalised and decodes";
  auto replay = buildGraph(
      registry(), "sources: [{name: cam, type: replay, params: {path: '" + dir / "raw.mkv" +
                      "', pace: fast}}]\n"
                      "sinks: [{name: keep, type: keep, inputs: {raw: cam.raw}, params: {key: interrupted}}]\n");
  ASSERT_TRUE(replay);
  EXPECT_NO_THROW(replay->run()) << "the recording ends with its end record";
  EXPECT_GT(kept("interrupted").count(), 0u);
}

// An RTSP viewer: rtspsrc over TCP (or UDP) on loopback, decoded to grey frames.
class Viewer {
 public:
  explicit Viewer(const std::string& url, const std::string& protocols = "tcp")
      : pipeline_(gst::parsePipeline("rtspsrc location=" + url + " protocols=" + protocols +
                                     " latency=0 ! rtph264depay ! decodebin ! videoconvert ! video/x-raw,format=GRAY8 "
                                     "! appsink name=out sync=false max-buffers=200")),
        out_(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "out")) {
    gst::keepOnlyErrorsOnBus(pipeline_.get());
    gst_element_set_state(pipeline_.get(), GST_STATE_PLAYING);
  }
  ~Viewer() { gst_element_set_state(pipeline_.get(), GST_STATE_NULL); }

  // Pulls `count` frames (10 s at most for each); returns each frame's middle row.
  std::vector<std::vector<uint8_t>> frames(int count, int width, int height) {
    std::vector<std::vector<uint8_t>> rows;
    for (int i = 0; i < count; ++i) {
      gst::OwnedSample sample(gst_app_sink_try_pull_sample(GST_APP_SINK(out_.get()), 10 * GST_SECOND));
      if (!sample) break;
      GstVideoInfo info;
      gst_video_info_from_caps(&info, gst_sample_get_caps(sample.get()));
      EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), width);
      EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), height);
      GstVideoFrame frame;
      if (!gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample.get()), GST_MAP_READ)) break;
      auto* data = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                   GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0) * (height / 2);
      rows.emplace_back(data, data + width);
      gst_video_frame_unmap(&frame);
    }
    return rows;
  }

  // Why frames stopped coming, as far as the viewer knows: the first error on its bus.
  std::string why() {
    std::string error = gst::pendingError(pipeline_.get());
    return error.empty() ? "no error on the viewer's bus" : error;
  }

 private:
  gst::Owned<GstElement> pipeline_, out_;
};

// A moving 320x240 picture at 60 frames/s served over RTSP on loopback, a key frame every
// keyframeInterval frames.
std::unique_ptr<Graph> rtspGraph(int keyframeInterval = 10) {
  return buildGraph(registry(),
                    "sources: [{name: cam, type: moving, params: {width: 320, height: 240, fps: 60}}]\n"
                    "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {rtsp_port: 0, rtsp_address: "
                    "127.0.0.1, keyframe_interval: " +
                        std::to_string(keyframeInterval) + "}}]\n");
}

std::string rtspUrl(const Graph& graph) {
  for (const auto& where : graph.destinations()) {
    auto at = where.find("rtsp://");
    if (at != std::string::npos) return where.substr(at, where.find(' ', at) - at);
  }
  return "";
}

int distinct(const std::vector<std::vector<uint8_t>>& rows) {
  std::set<std::vector<uint8_t>> unique(rows.begin(), rows.end());
  return static_cast<int>(unique.size());
}

TEST(Video, RtspServesTwoViewersAndOneLeavingDoesNotStopTheOther) {
  auto graph = rtspGraph();
  ASSERT_TRUE(graph);
  std::string url = rtspUrl(*graph);
  ASSERT_NE(url.find("rtsp://127.0.0.1:"), std::string::npos) << url;
  std::thread running([&] { graph->run(); });
  {
    Viewer staying(url);
    {
      Viewer leaving(url);
      auto a = leaving.frames(30, 320, 240);
      auto b = staying.frames(30, 320, 240);
      EXPECT_EQ(a.size(), 30u) << leaving.why();
      EXPECT_EQ(b.size(), 30u) << staying.why();
      EXPECT_GT(distinct(a), 5) << "the picture moves";
    }  // one viewer goes mid-stream
    uint64_t before = graph->metrics().framesDone();
    auto c = staying.frames(30, 320, 240);
    EXPECT_EQ(c.size(), 30u) << "the other viewer keeps receiving; " << staying.why();
    EXPECT_GT(distinct(c), 5);
    EXPECT_GT(graph->metrics().framesDone(), before) << "the pipeline keeps running";
  }
  graph->stop();
  running.join();
}

// The last viewer leaves and the next arrives at once, six times: the server tears the old media
// down and builds a new one for each, and the frames must reach each new one.
TEST(Video, EachViewerAfterTheLastOneLeftGetsPictures) {
  auto graph = rtspGraph();
  ASSERT_TRUE(graph);
  std::string url = rtspUrl(*graph);
  std::thread running([&] { graph->run(); });
  for (int viewer = 0; viewer < 6; ++viewer) {
    Viewer one(url);
    auto frames = one.frames(10, 320, 240);
    EXPECT_EQ(frames.size(), 10u) << "viewer " << viewer << ": " << one.why();
  }
  graph->stop();
  running.join();
}

// Key frames 10000 frames apart (almost 3 minutes): a viewer joining the running stream decodes
// within the viewer's 10 s only if its arrival made the encoder emit a key frame.
TEST(Video, AViewerJoiningARunningStreamGetsAKeyFrameAtOnce) {
  auto graph = rtspGraph(10000);
  ASSERT_TRUE(graph);
  std::string url = rtspUrl(*graph);
  std::thread running([&] { graph->run(); });
  {
    Viewer first(url);
    EXPECT_EQ(first.frames(10, 320, 240).size(), 10u) << "the first viewer: " << first.why();
    Viewer joining(url);
    EXPECT_EQ(joining.frames(10, 320, 240).size(), 10u) << "the viewer joining the shared stream: " << joining.why();
  }
  graph->stop();
  running.join();
}

// A viewer that sets up the stream over TCP (interleaved), plays it, and never reads again, as one
// on a dead Wi-Fi link does: a raw socket with a 4 KB receive buffer speaking RTSP by hand.
class StalledViewer {
 public:
  explicit StalledViewer(const std::string& url) {
    auto colon = url.rfind(':');
    int port = std::stoi(url.substr(colon + 1, url.find('/', colon) - colon - 1));
    sock_ = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(sock_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    timeval timeout{10, 0};
    setsockopt(sock_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(sock_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("stalled viewer: cannot connect");
    request("OPTIONS " + url + " RTSP/1.0\r\nCSeq: 1\r\n\r\n");
    std::string sdp = request("DESCRIBE " + url + " RTSP/1.0\r\nCSeq: 2\r\nAccept: application/sdp\r\n\r\n");
    auto control = sdp.find("a=control:stream=");
    if (control == std::string::npos) throw std::runtime_error("stalled viewer: no stream in the SDP:\n" + sdp);
    std::string stream = url + "/" + sdp.substr(control + 10, sdp.find_first_of("\r\n", control) - control - 10);
    std::string setup =
        request("SETUP " + stream + " RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n");
    auto session = setup.find("Session: ");
    if (session == std::string::npos) throw std::runtime_error("stalled viewer: no session:\n" + setup);
    std::string id = setup.substr(session + 9, setup.find_first_of(";\r", session) - session - 9);
    // PLAY, then not one more byte read: the reply and the media stay in the socket.
    std::string play = "PLAY " + url + " RTSP/1.0\r\nCSeq: 4\r\nSession: " + id + "\r\n\r\n";
    send(sock_, play.data(), play.size(), 0);
  }
  ~StalledViewer() { close(sock_); }

  // Reads everything queued; true when the server closed the connection (within 10 s).
  bool closedByServer() {
    char buffer[65536];
    for (;;) {
      ssize_t n = recv(sock_, buffer, sizeof buffer, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;  // timed out: still open
    }
  }

 private:
  // Sends a request and reads its reply (headers and the body Content-Length names).
  std::string request(const std::string& text) {
    send(sock_, text.data(), text.size(), 0);
    std::string reply;
    char c;
    while (reply.find("\r\n\r\n") == std::string::npos && recv(sock_, &c, 1, 0) == 1) reply += c;
    auto length = reply.find("Content-Length: ");
    size_t body = length == std::string::npos ? 0 : std::stoul(reply.substr(length + 16));
    while (body > 0 && recv(sock_, &c, 1, 0) == 1) reply += c, --body;
    return reply;
  }
  int sock_ = -1;
};

uint64_t counter(Graph& graph, const std::string& name) {
  std::string table = graph.metrics().table();
  auto at = table.find(" " + name + " ");
  return at == std::string::npos ? 0 : std::stoull(table.substr(at + name.size() + 2));
}

// One viewer that stops reading must not hold up the others: every viewer has its own media, so the
// stalled one only fills its own feed (frames dropped there, counted), and it is dropped once its
// connection has taken nothing for rtsp_stall_timeout_s, and counted. (With one shared media,
// gst-rtsp-server paces the stream to its fastest TCP viewer and, with the only TCP viewer stalled,
// stopped it for everyone, UDP viewers included.)
TEST(Video, AStalledViewerIsDroppedAndTheOthersKeepTheirPictures) {
  auto graph = buildGraph(
      registry(),
      "sources: [{name: cam, type: moving, params: {width: 640, height: 480, fps: 60, noise: true}}]\n"
      "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {rtsp_port: 0, rtsp_address: 127.0.0.1, "
      "bitrate_kbps: 8000, rtsp_stall_timeout_s: 10}}]\n");
  ASSERT_TRUE(graph);
  std::string url = rtspUrl(*graph);
  std::thread running([&] { graph->run(); });
  {
    Viewer healthy(url, "udp");
    EXPECT_EQ(healthy.frames(30, 640, 480).size(), 30u) << healthy.why();
    StalledViewer stalled(url);
    // 20 s of pictures (60 frames/s); the longest wait for one must stay well under the 10 s after
    // which the stalled viewer goes (a shared media would pause every viewer that long).
    auto longest = std::chrono::steady_clock::duration::zero();
    auto last = std::chrono::steady_clock::now();
    for (int frame = 0; frame < 1200; ++frame) {
      if (healthy.frames(1, 640, 480).size() != 1u) {
        ADD_FAILURE() << "the healthy viewer froze after " << frame << " frames beside a stalled one; " << healthy.why()
                      << "\n"
                      << graph->metrics().table();
        break;
      }
      auto now = std::chrono::steady_clock::now();
      longest = std::max(longest, now - last);
      last = now;
    }
    EXPECT_LT(longest, std::chrono::milliseconds(2500)) << "the healthy viewer waited that long for a frame";
    EXPECT_EQ(counter(*graph, "rtsp_viewers_dropped"), 1u) << graph->metrics().table();
    EXPECT_GT(counter(*graph, "rtsp_viewer_frames_dropped"), 0u)
        << "the stalled viewer's feed filled: " << graph->metrics().table();
    EXPECT_TRUE(stalled.closedByServer()) << "the server closed the stalled viewer's connection";
  }
  graph->stop();
  running.join();
}

// The live view listens on loopback unless told otherwise, and with rtsp_credentials a viewer must
// log in: with the right password it gets pictures, without one it gets none.
TEST(Video, RtspAsksForAPasswordWhenCredentialsAreGiven) {
  test::TempDir dir;
  std::ofstream(dir / "users") << "# viewers\nalice:s3cret\n";
  auto graph = buildGraph(
      registry(),
      "sources: [{name: cam, type: moving, params: {width: 320, height: 240, fps: 60}}]\n"
      "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {rtsp_port: 0, rtsp_credentials: '" +
          dir / "users" + "'}}]\n");
  ASSERT_TRUE(graph);
  std::string url = rtspUrl(*graph);
  ASSERT_EQ(url.rfind("rtsp://127.0.0.1:", 0), 0u) << "the default address is loopback: " << url;
  std::thread running([&] { graph->run(); });
  {
    std::string withLogin = "rtsp://alice:s3cret@" + url.substr(7);
    Viewer allowed(withLogin);
    EXPECT_EQ(allowed.frames(10, 320, 240).size(), 10u) << allowed.why();
    Viewer stranger(url);
    EXPECT_EQ(stranger.frames(1, 320, 240).size(), 0u) << "a viewer without the password gets no pictures";
    EXPECT_NE(stranger.why().find("Unauthorized"), std::string::npos) << stranger.why();
  }
  graph->stop();
  running.join();

  std::ofstream(dir / "broken") << "alice\n";
  Diagnostics d("test.yaml");
  EXPECT_FALSE(buildGraph(registry(),
                          "sources: [{name: cam, type: moving}]\nsinks: [{name: out, type: video, inputs: {image: "
                          "cam.image}, params: {rtsp_port: 0, rtsp_credentials: '" +
                              dir / "broken" + "'}}]\n",
                          d));
  EXPECT_NE(d.text().find("broken line 1: expected user:password"), std::string::npos) << d.text();
}

// validate writes nothing: an existing recording (overwrite: true) keeps its bytes, no MP4 or image
// folder appears.
// A media server taking streams with RTSP RECORD (gst-rtsp-server in record mode) at
// rtsp://127.0.0.1:PORT/rig, decoding what it receives and counting the frames.
class RecordServer {
 public:
  explicit RecordServer(int port = 0) {
    context_ = g_main_context_new();
    loop_ = g_main_loop_new(context_, FALSE);
    server_ = gst_rtsp_server_new();
    gst_rtsp_server_set_address(server_, "127.0.0.1");
    gst_rtsp_server_set_service(server_, std::to_string(port).c_str());
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_transport_mode(factory, GST_RTSP_TRANSPORT_MODE_RECORD);
    gst_rtsp_media_factory_set_launch(factory, ("( rtph264depay name=depay0 ! h264parse ! " + h264Decoder() +
                                                " ! fakesink name=frames signal-handoffs=true sync=false async=false )")
                                                   .c_str());
    g_signal_connect(
        factory, "media-configure", G_CALLBACK(+[](GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer self) {
          gst::Owned<GstElement> bin(gst_rtsp_media_get_element(media));
          gst::Owned<GstElement> sink(gst_bin_get_by_name_recurse_up(GST_BIN(bin.get()), "frames"));
          g_signal_connect(sink.get(), "handoff", G_CALLBACK(+[](GstElement*, GstBuffer*, GstPad*, gpointer s) {
                             ++static_cast<RecordServer*>(s)->frames_;
                           }),
                           self);
        }),
        this);
    GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server_);
    gst_rtsp_mount_points_add_factory(mounts, "/rig", factory);
    g_object_unref(mounts);
    source_ = gst_rtsp_server_create_source(server_, nullptr, nullptr);
    EXPECT_TRUE(source_) << "the record server could not listen on " << port;
    if (source_) g_source_attach(source_, context_);
    port_ = gst_rtsp_server_get_bound_port(server_);
    thread_ = std::thread([this] {
      g_main_context_push_thread_default(context_);
      g_main_loop_run(loop_);
      g_main_context_pop_thread_default(context_);
    });
  }
  // Goes away as a server that stops does: its clients' connections closed (from the server's own
  // thread, where their sockets are watched), then it stops listening.
  ~RecordServer() {
    GSource* close = g_idle_source_new();
    g_source_set_callback(
        close,
        [](gpointer server) -> gboolean {
          gst_rtsp_server_client_filter(
              static_cast<GstRTSPServer*>(server),
              [](GstRTSPServer*, GstRTSPClient*, gpointer) { return GST_RTSP_FILTER_REMOVE; }, nullptr);
          return G_SOURCE_REMOVE;
        },
        server_, nullptr);
    g_source_attach(close, context_);
    g_source_unref(close);
    if (source_) {
      g_source_destroy(source_);
      g_source_unref(source_);
    }
    gst::quitLoop(loop_, context_, thread_);
    g_object_unref(server_);
    g_main_loop_unref(loop_);
    g_main_context_unref(context_);
  }
  int port() const { return port_; }
  int frames() const { return frames_; }
  // Waits until at least `count` frames arrived, at most `seconds`.
  bool waitForFrames(int count, int seconds) const {
    for (int i = 0; i < seconds * 50 && frames_ < count; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return frames_ >= count;
  }

 private:
  GMainContext* context_;
  GMainLoop* loop_;
  GstRTSPServer* server_;
  GSource* source_ = nullptr;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> frames_{0};
};

// The live view pushed to a media server, which decodes it; the server restarted on the same port
// mid-run: the sink reconnects and the new server decodes frames too; the graph never waited
// (frames kept coming) and what could not be sent is counted.
TEST(Video, PublishesToAMediaServerAndReconnectsWhenItRestarts) {
  auto first = std::make_unique<RecordServer>();
  int port = first->port();
  auto graph = buildGraph(registry(),
                          "sources: [{name: cam, type: moving, params: {width: 160, height: 120, fps: 30}}]\n"
                          "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {publish: "
                          "'rtsp://127.0.0.1:" +
                              std::to_string(port) + "/rig', fps: 30, keyframe_interval: 15}}]\n");
  ASSERT_TRUE(graph);
  std::thread running([&] { graph->run(); });
  EXPECT_TRUE(first->waitForFrames(20, 20)) << "decoded " << first->frames();
  first.reset();  // the server goes away
  uint64_t before = graph->metrics().framesDone();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_GT(graph->metrics().framesDone(), before + 20) << "the graph keeps its pace without the server";
  RecordServer second(port);
  EXPECT_TRUE(second.waitForFrames(20, 40)) << "publishing resumed; decoded " << second.frames();
  graph->stop();
  running.join();
  std::string table = graph->metrics().table();
  EXPECT_TRUE(std::regex_search(table, std::regex("publish_connections 2\\b"))) << "one connection to each server\n"
                                                                                << table;
  EXPECT_EQ(table.find("publish_frames_dropped 0 "), std::string::npos) << "frames without a server are counted\n"
                                                                        << table;
}

TEST(Validate, WritesNothing) {
  test::TempDir dir;
  std::ofstream(dir / "raw.mkv") << "an earlier recording";
  writeImage(dir / "a.png", test::randomImage({Depth::u8, 1}, 64, 48));
  int port = 0;
  {
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t length = sizeof addr;
    getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &length);
    port = ntohs(addr.sin_port);
    close(sock);
  }
  std::string config = dir / "p.yaml";
  std::ofstream(config)
      << "sources:\n  - {name: cam, type: images, params: {path: a.png}}\n"
         "stages:\n  - {name: view, type: compose, inputs: {a: cam.image}, params: {colormaps: [turbo]}}\n"
         "sinks:\n  - {name: raw, type: record, inputs: {raw: cam.image}, params: {path: raw.mkv, overwrite: true}}\n"
         "  - {name: video, type: video, inputs: {image: view.image}, params: {rtsp_port: "
      << port
      << ", mp4: clips/view.mp4}}\n  - {name: files, type: image_writer, inputs: {v: view.image}, params: {dir: "
         "frames}}\n";
  Child c = spawn({binary(), "validate", config}, dir);
  EXPECT_EQ(waitFor(c, std::chrono::seconds(30)), 0);
  std::ifstream recording(dir / "raw.mkv");
  std::string kept((std::istreambuf_iterator<char>(recording)), {});
  EXPECT_EQ(kept, "an earlier recording");
  EXPECT_FALSE(std::filesystem::exists(dir / "clips"));
  EXPECT_FALSE(std::filesystem::exists(dir / "frames"));
}

TEST(Video, APortInUseIsAClearError) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(sock, 1), 0);
  socklen_t length = sizeof addr;
  getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &length);
  int port = ntohs(addr.sin_port);
  Diagnostics d("test.yaml");
  auto graph = buildGraph(registry(),
                          "sources: [{name: cam, type: moving}]\n"
                          "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {rtsp_port: " +
                              std::to_string(port) + ", rtsp_address: 127.0.0.1}}]\n",
                          d);
  close(sock);
  EXPECT_FALSE(graph);
  EXPECT_NE(d.text().find("cannot serve RTSP on 127.0.0.1:" + std::to_string(port)), std::string::npos) << d.text();
}

TEST(Video, AnEncoderThatIsNotInstalledIsAClearError) {
  if (gst::hasElement("nvv4l2h264enc")) GTEST_SKIP() << "this machine has the Jetson encoder";
  Diagnostics d("test.yaml");
  auto graph = buildGraph(registry(),
                          "sources: [{name: cam, type: moving}]\n"
                          "sinks: [{name: out, type: video, inputs: {image: cam.image}, params: {mp4: /tmp/never.mp4, "
                          "encoder: nvv4l2h264enc}}]\n",
                          d);
  EXPECT_FALSE(graph);
  EXPECT_NE(d.text().find("encoder 'nvv4l2h264enc' (nvv4l2h264enc) is not installed"), std::string::npos) << d.text();
}

}  // namespace
}  // namespace pp
