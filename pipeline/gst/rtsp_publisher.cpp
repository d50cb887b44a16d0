#include "pipeline/gst/rtsp_publisher.hpp"

#include <gst/app/gstappsrc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "pipeline/gst/gst_support.hpp"

namespace pp::gst {

struct RtspPublisher::Impl {
  std::string url, protocols;
  int fps;
  guint64 maxBytes;  // queued in the appsrc before frames are dropped: about 2 s of stream
  std::function<void()> askForKeyFrame;

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  Owned<GstElement> pipeline, appsrc;  // while connecting or connected
  bool playing = false, started = false, keyFrameAsked = false;
  std::atomic<uint64_t> dropped{0}, connectedGauge{0}, connections{0};
  std::thread thread;

  // Connects, watches the connection, and after an error waits (1, 2, 4 ... 30 s) and connects again.
  void run() {
    double delay = 1;
    bool warned = false;
    while (!waitFor(0)) {
      std::string error = connectAndWatch();
      Owned<GstElement> gone;
      bool wasUp = false;
      {  // push() sees no pipeline from here; its teardown (network) happens outside the lock
        std::lock_guard lock(mutex);
        wasUp = playing;
        playing = false;
        connectedGauge = 0;
        appsrc.reset();
        gone = std::move(pipeline);
      }
      if (gone) gst_element_set_state(gone.get(), GST_STATE_NULL);
      if (waitFor(0)) return;
      if (wasUp) delay = 1, warned = false;
      if (!warned) spdlog::warn("video: publishing to {} failed ({}); trying again", url, error);
      warned = true;
      if (waitFor(delay)) return;
      delay = std::min(delay * 2, 30.0);
    }
  }

  // True when stopping; waits up to `seconds` for it.
  bool waitFor(double seconds) {
    std::unique_lock lock(mutex);
    wake.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stopping; });
    return stopping;
  }

  // One connection, until it fails ("why") or the publisher stops ("").
  std::string connectAndWatch() {
    Owned<GstElement> p;
    try {
      p = parsePipeline(
          "appsrc name=src is-live=true format=time block=false "
          "caps=video/x-h264,stream-format=byte-stream,alignment=au ! h264parse ! "
          "rtspclientsink name=out latency=0 protocols=" +
          protocols + " location=\"" + url + "\"");
    } catch (const std::exception& e) {
      return e.what();
    }
    {
      std::lock_guard lock(mutex);
      pipeline = std::move(p);
      appsrc.reset(gst_bin_get_by_name(GST_BIN(pipeline.get()), "src"));
      started = keyFrameAsked = false;
    }
    if (gst_element_set_state(pipeline.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      std::string error = pendingError(pipeline.get());
      return error.empty() ? "the server did not take the stream" : error;
    }
    Owned<GstBus> bus(gst_element_get_bus(pipeline.get()));
    int playingPolls = 0;
    for (;;) {
      if (waitFor(0)) return "";
      GstState state = GST_STATE_NULL;
      gst_element_get_state(pipeline.get(), &state, nullptr, 0);
      playingPolls = state == GST_STATE_PLAYING ? playingPolls + 1 : 0;
      // rtspclientsink reaches PLAYING before the server has answered: a refused connection shows
      // as an error just after, so the connection counts once it has lasted two polls (200 ms).
      if (playingPolls >= 2 && !playing) {
        std::lock_guard lock(mutex);
        playing = true;
        connectedGauge = 1;
        ++connections;
        spdlog::info("video: publishing to {}", url);
      }
      GstMessage* message = gst_bus_timed_pop_filtered(
          bus.get(), 100 * GST_MSECOND, static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
      if (!message) continue;
      std::string why = "the server closed the stream";
      if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
        GError* error = nullptr;
        gst_message_parse_error(message, &error, nullptr);
        why = error ? error->message : "an error";
        if (error) g_error_free(error);
      }
      gst_message_unref(message);
      return why;
    }
  }

  // As a viewer's feed (video_output.cpp): stamped with this pipeline's running time, from a key
  // frame on, dropped when the connection has fallen behind by maxBytes.
  void push(GstBuffer* buffer) {
    std::lock_guard lock(mutex);
    if (!playing || !appsrc) {
      ++dropped;
      return;
    }
    if (gst_app_src_get_current_level_bytes(GST_APP_SRC(appsrc.get())) > maxBytes) {
      ++dropped;
      started = false;
      return;
    }
    Owned<GstClock> clock(gst_element_get_clock(appsrc.get()));
    if (!clock) {
      ++dropped;
      return;
    }
    if (!started) {
      if (GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)) {
        if (!keyFrameAsked) askForKeyFrame();
        keyFrameAsked = true;
        ++dropped;
        return;
      }
      started = true;
      keyFrameAsked = false;
    }
    GstBuffer* copy = gst_buffer_copy(buffer);
    GST_BUFFER_PTS(copy) = GST_BUFFER_DTS(copy) =
        gst_clock_get_time(clock.get()) - gst_element_get_base_time(appsrc.get());
    GST_BUFFER_DURATION(copy) = GST_SECOND / static_cast<guint64>(fps);
    gst_app_src_push_buffer(GST_APP_SRC(appsrc.get()), copy);
  }
};

RtspPublisher::RtspPublisher(std::string url, std::string protocols, int fps, int bitrateKbps,
                             std::function<void()> askForKeyFrame)
    : impl_(std::make_unique<Impl>()) {
  ensureInit();
  Impl& d = *impl_;
  d.url = std::move(url);
  d.protocols = std::move(protocols);
  d.fps = fps;
  d.maxBytes = std::max<guint64>(1u << 20, static_cast<guint64>(2.0 * bitrateKbps * 1000 / 8));
  d.askForKeyFrame = std::move(askForKeyFrame);
  d.thread = std::thread([&d] { d.run(); });
}

RtspPublisher::~RtspPublisher() { stop(); }

void RtspPublisher::stop() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void RtspPublisher::push(GstBuffer* accessUnit) { impl_->push(accessUnit); }
const std::atomic<uint64_t>& RtspPublisher::framesDropped() const { return impl_->dropped; }
const std::atomic<uint64_t>& RtspPublisher::connected() const { return impl_->connectedGauge; }
const std::atomic<uint64_t>& RtspPublisher::connections() const { return impl_->connections; }

}  // namespace pp::gst
