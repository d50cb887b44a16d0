// Sink `video`: the composed view as H.264 over RTSP and/or into MP4 files.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pipeline/credentials.hpp"
#include "pipeline/gst/video_output.hpp"
#include "pipeline/output_path.hpp"
#include "pipeline/registry.hpp"

namespace pp::gst {

namespace {

struct VideoSinkParams {
  int rtsp_port = -1;
  std::string rtsp_address = "127.0.0.1";
  Path rtsp_credentials;
  std::string rtsp_mount = "/polarpipe";
  double rtsp_stall_timeout_s = 3;
  Path mp4;
  double mp4_max_seconds = 0;
  double mp4_max_mb = 0;
  std::string encoder = "auto";
  int bitrate_kbps = 4000;
  int keyframe_interval = 24;
  int fps = 24;
  int queue_frames = 4;
  std::string publish;
  std::string publish_protocol = "tcp";
};

bool isLoopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost";
}

class VideoSink : public Sink {
 public:
  using Params = VideoSinkParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("rtsp_port", &Params::rtsp_port,
                 "serve RTSP on this port (8554 is usual); 0: any free port; -1: no RTSP", intIn(-1, 65535))
            .add("rtsp_address", &Params::rtsp_address,
                 "address to listen on: 127.0.0.1 this machine only, 0.0.0.0 every network (then set rtsp_credentials)")
            .add("rtsp_credentials", &Params::rtsp_credentials,
                 "file of user:password lines; viewers must log in (Basic or Digest). "
                 "POLARPIPE_RTSP_CREDENTIALS=user:password in the environment adds one",
                 existingFile())
            .add("rtsp_mount", &Params::rtsp_mount, "path of the stream: rtsp://HOST:PORT/MOUNT",
                 Rule<std::string>{"a path starting with /",
                                   [](const std::string& m) { return m.size() > 1 && m[0] == '/'; }})
            .add("rtsp_stall_timeout_s", &Params::rtsp_stall_timeout_s,
                 "drop a viewer whose connection takes no data for this long (a stalled TCP viewer holds the stream "
                 "for every viewer until then)",
                 numberIn(0.5, 600))
            .add("mp4", &Params::mp4, "record to this MP4 file; with a split limit, a name with %d (rec_%03d.mp4)",
                 anyPath())
            .add("mp4_max_seconds", &Params::mp4_max_seconds,
                 "start a new MP4 file after this many seconds; 0: one file", numberIn(0, 1e7))
            .add("mp4_max_mb", &Params::mp4_max_mb, "start a new MP4 file after this many megabytes; 0: no limit",
                 numberIn(0, 1e7))
            .add("encoder", &Params::encoder,
                 "H.264 encoder: auto takes nvv4l2h264enc (Jetson), else x264, else openh264",
                 oneOf({"auto", "x264", "nvv4l2h264enc", "openh264"}))
            .add("bitrate_kbps", &Params::bitrate_kbps, "target bit rate", intIn(100, 1000000))
            .add("keyframe_interval", &Params::keyframe_interval,
                 "frames between key frames (new RTSP viewers also get one at once)", intIn(1, 10000))
            .add("fps", &Params::fps, "frame rate written into the stream: frame n is shown at n / fps s",
                 intIn(1, 1000))
            .add("publish", &Params::publish,
                 "also push the stream to a media server (RTSP RECORD): rtsp://server:port/path; reconnects when "
                 "the server restarts, frames meanwhile dropped (counted); '': not published",
                 Rule<std::string>{"'' or an rtsp:// URL",
                                   [](const std::string& u) { return u.empty() || u.rfind("rtsp://", 0) == 0; }})
            .add("publish_protocol", &Params::publish_protocol, "how the published stream travels",
                 oneOf({"tcp", "udp"}))
            .add("queue_frames", &Params::queue_frames,
                 "frames waiting for the encoder; beyond that new frames are dropped (counted), so the graph never "
                 "waits",
                 intIn(1, 120));
    return schema;
  }

  VideoSink(const Params& p, ParamContext& ctx) : p_(p) {
    if (!p.rtsp_credentials.empty()) {
      try {
        users_ = readCredentials(p.rtsp_credentials.value);
      } catch (const std::invalid_argument& e) {
        ctx.diagnostics.error(ctx.node["rtsp_credentials"], ctx.keyPath + ".rtsp_credentials", e.what());
      }
    }
    if (const char* fromEnvironment = std::getenv("POLARPIPE_RTSP_CREDENTIALS"); fromEnvironment && *fromEnvironment) {
      try {
        auto more = parseCredentials(fromEnvironment, "POLARPIPE_RTSP_CREDENTIALS");
        users_.insert(users_.end(), more.begin(), more.end());
      } catch (const std::invalid_argument& e) {
        ctx.error(e.what());
      }
    }
    if (p.rtsp_port < 0 && p.mp4.empty() && p.publish.empty())
      ctx.error("give rtsp_port (live view), mp4 (a recording) and/or publish (a media server)");
    bool split = p.mp4_max_seconds > 0 || p.mp4_max_mb > 0;
    if (split && p.mp4.value.find('%') == std::string::npos)
      ctx.diagnostics.error(
          ctx.node["mp4"], ctx.keyPath + ".mp4",
          "with mp4_max_seconds or mp4_max_mb the name needs a %d for the part number, e.g. rec_%03d.mp4");
  }

  void setup(PortSetup& ports) override {
    const PortSpec* in = ports.imageInput("image", {{Depth::u8, 3}, {Depth::u8, 1}});
    if (!in) return;
    if (in->width % 2 || in->height % 2) {
      ports.fail("H.264 needs an even width and height, but image is " + in->text());
      return;
    }
    VideoOptions o;
    o.width = in->width;
    o.height = in->height;
    o.channels = in->format.channels;
    o.fps = p_.fps;
    o.encoder = p_.encoder;
    o.bitrateKbps = p_.bitrate_kbps;
    o.keyframeInterval = p_.keyframe_interval;
    o.queueFrames = p_.queue_frames;
    o.rtspPort = p_.rtsp_port;
    o.rtspAddress = p_.rtsp_address;
    o.rtspMount = p_.rtsp_mount;
    o.rtspStallTimeoutS = p_.rtsp_stall_timeout_s;
    o.rtspUsers = users_;
    if (p_.rtsp_port >= 0 && users_.empty() && !isLoopback(p_.rtsp_address))
      spdlog::warn(
          "video: the live view on {} is open to anyone who can reach this machine; set rtsp_credentials to ask for a "
          "password",
          p_.rtsp_address);
    o.mp4 = p_.mp4.value;
    o.mp4MaxSeconds = p_.mp4_max_seconds;
    o.mp4MaxMegabytes = p_.mp4_max_mb;
    o.publishUrl = p_.publish;
    o.publishProtocol = p_.publish_protocol;
    if (ports.devices() !=
        PortSetup::Devices::use) {  // validate: the encoder and the folder checked; nothing started, no port bound
      if (std::string why = missingEncoder(o.encoder); !why.empty()) ports.fail(why);
      if (!o.mp4.empty())
        if (std::string why = whyNotWritable(o.mp4); !why.empty()) ports.fail("cannot write " + o.mp4 + ": " + why);
      return;
    }
    try {
      output_ = std::make_unique<VideoOutput>(o);
    } catch (const std::exception& e) {
      ports.fail(e.what());
    }
  }

  void consume(const SinkFrame& frame) override {
    if (output_->push(frame.in("image"), index_++))
      ++encoded_;
    else
      ++dropped_;
  }

  void finish() override {
    if (output_) output_->finish();
  }

  std::string destination() const override {
    if (!output_) return "";
    std::string where;
    if (!p_.mp4.empty()) where = p_.mp4.value;
    if (p_.rtsp_port >= 0) where += (where.empty() ? "" : " and ") + output_->rtspUrl();
    if (!p_.publish.empty()) where += (where.empty() ? "" : " and ") + p_.publish;
    return where + " (" + output_->encoder() + ", " + std::to_string(encoded_.load()) + " frames, " +
           std::to_string(dropped_.load()) + " dropped)";
  }

  std::vector<Counter> counters() const override {
    static const std::atomic<uint64_t> none{0};
    const RtspPublisher* publisher = output_ ? output_->publisher() : nullptr;
    return {{"video_frames", "Frames handed to the H.264 encoder.", &encoded_},
            {"video_dropped", "Frames dropped at the video sink because the encoder was behind.", &dropped_},
            {"rtsp_viewers_dropped", "RTSP viewers dropped because their connection stopped taking data.",
             output_ ? &output_->rtspViewersDropped() : &none},
            {"rtsp_viewer_frames_dropped",
             "Frames an RTSP viewer missed because it was behind (the other viewers still got them).",
             output_ ? &output_->rtspViewerFramesDropped() : &none},
            {"publish_frames_dropped", "Frames not published: no connection to the media server, or it was behind.",
             publisher ? &publisher->framesDropped() : &none},
            {"publish_connected", "1 while the media server takes the published stream.",
             publisher ? &publisher->connected() : &none, true},
            {"publish_connections", "Connections made to the media server (reconnections after the first).",
             publisher ? &publisher->connections() : &none}};
  }

 private:
  Params p_;
  std::vector<std::pair<std::string, std::string>> users_;
  std::unique_ptr<VideoOutput> output_;
  uint64_t index_ = 0;
  std::atomic<uint64_t> encoded_{0}, dropped_{0};
};

}  // namespace

void registerVideoSink(Registry& registry) {
  registry.add<VideoSink>(Role::sink, "video",
                          "H.264 live view over RTSP and/or MP4 files through GStreamer (input image: u8 RGB or grey)");
}

}  // namespace pp::gst
