// The live view pushed to a media server: encoded H.264 access units sent with RTSP RECORD
// (rtspclientsink) to rtsp://server:port/path. A thread of its own connects, and reconnects after
// 1, 2, 4 ... 30 s when the server goes away or restarts; push() never blocks: without a connection,
// or when the connection is behind, the frame is dropped and counted.
#pragma once
#include <gst/gst.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace pp::gst {

class RtspPublisher {
 public:
  // `protocols`: tcp or udp. `askForKeyFrame` is called when a (new) connection needs one to start.
  RtspPublisher(std::string url, std::string protocols, int fps, int bitrateKbps, std::function<void()> askForKeyFrame);
  ~RtspPublisher();

  void push(GstBuffer* accessUnit);
  // Closes the connection and stops trying; the counts stay readable (the metrics hold them).
  void stop();

  const std::atomic<uint64_t>& framesDropped() const;  // not sent: no connection, or it fell behind
  const std::atomic<uint64_t>& connected() const;      // 1 while the server takes the stream
  const std::atomic<uint64_t>& connections() const;    // connections made (reconnections after the first)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp::gst
