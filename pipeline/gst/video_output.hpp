// H.264 video out: appsrc -> convert -> encoder -> tee -> RTSP server (gst-rtsp-server in process,
// shared media), MP4 files (splitmuxsink) and/or a media server the stream is published to
// (RtspPublisher). Frames are copied into a bounded buffer pool, so
// push() never blocks: when the encoder falls behind the pool is empty and the frame is dropped.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/gst/rtsp_publisher.hpp"
#include "pipeline/image.hpp"

namespace pp::gst {

struct VideoOptions {
  int width = 0, height = 0;
  int channels = 3;              // 3: RGB, 1: grey
  int fps = 24;                  // stream timing: frame n has PTS n / fps
  std::string encoder = "auto";  // auto | x264 | nvv4l2h264enc | openh264
  int bitrateKbps = 4000;
  int keyframeInterval = 24;  // frames between key frames
  int queueFrames = 4;        // frames waiting for the encoder before new ones are dropped
  int rtspPort = -1;          // -1: no RTSP; 0: any free port
  std::string rtspAddress = "127.0.0.1";
  // Viewers must log in (Basic or Digest) as one of these user:password pairs; empty: no login.
  std::vector<std::pair<std::string, std::string>> rtspUsers;
  std::string rtspMount = "/polarpipe";
  double rtspStallTimeoutS = 3;  // a viewer whose connection takes nothing this long is dropped
  std::string mp4;               // "" : no file; may hold a printf %d for split files
  double mp4MaxSeconds = 0;      // 0: no split by duration
  double mp4MaxMegabytes = 0;    // 0: no split by size
  std::string publishUrl;        // "": not published; else rtsp://server:port/path (RTSP RECORD)
  std::string publishProtocol = "tcp";
  // Every encoded access unit with its PTS (benchmarks and tests).
  std::function<void(uint64_t ptsNs, size_t bytes)> onEncoded;
};

// The encoder element `auto` resolves to on this machine, or "" when none is installed.
std::string pickEncoder(const std::string& wanted);
// Why `wanted` cannot encode here ("" when pickEncoder finds one), for errors.
std::string missingEncoder(const std::string& wanted);

class VideoOutput {
 public:
  // Starts the pipeline and the RTSP server; throws with a clear message (port in use, encoder
  // missing, unwritable file).
  explicit VideoOutput(const VideoOptions& options);
  ~VideoOutput();

  // Copies `image` (host, u8 with `channels` channels) into the stream as frame `index`.
  // False when the frame was dropped because the encoder is behind. Throws on a pipeline error.
  bool push(const Image& image, uint64_t index);
  // End of stream: waits until the MP4 file is finalised, then stops the server.
  void finish();

  std::string rtspUrl() const;  // "" without RTSP
  const std::string& encoder() const;
  int rtspClients() const;
  // Viewers dropped because their connection stopped taking data (rtspStallTimeoutS).
  const std::atomic<uint64_t>& rtspViewersDropped() const;
  // Frames a viewer missed because it was behind (its own feed full; the others still got them).
  const std::atomic<uint64_t>& rtspViewerFramesDropped() const;
  const RtspPublisher* publisher() const;  // null when not publishing

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::gst
