#include "pipeline/gst/video_output.hpp"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/video/video.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "pipeline/glib_owned.hpp"
#include "pipeline/gst/gst_support.hpp"

namespace pp::gst {

namespace {

// How far a viewer may fall behind, in seconds of stream at the set bit rate, before its feed drops
// frames (a live view that lags more is no longer live).
constexpr double kFeedMaxSeconds = 2;

std::string encoderChain(const std::string& encoder, const VideoOptions& o) {
  if (encoder == "x264enc")
    return "videoconvert n-threads=0 ! video/x-raw,format=I420 ! x264enc name=encoder tune=zerolatency "
           "speed-preset=ultrafast bitrate=" +
           std::to_string(o.bitrateKbps) + " key-int-max=" + std::to_string(o.keyframeInterval);
  if (encoder == "nvv4l2h264enc")  // Jetson: the hardware converter and encoder work in NVMM memory
    return "videoconvert ! video/x-raw,format=I420 ! nvvidconv ! video/x-raw(memory:NVMM),format=NV12 ! nvv4l2h264enc "
           "name=encoder insert-sps-pps=true bitrate=" +
           std::to_string(o.bitrateKbps * 1000) + " iframeinterval=" + std::to_string(o.keyframeInterval) +
           " idrinterval=" + std::to_string(o.keyframeInterval);
  return "videoconvert ! video/x-raw,format=I420 ! openh264enc name=encoder bitrate=" +
         std::to_string(o.bitrateKbps * 1000) + " gop-size=" + std::to_string(o.keyframeInterval);
}

std::string elementFor(const std::string& wanted) {
  if (wanted == "x264") return "x264enc";
  if (wanted == "openh264") return "openh264enc";
  return wanted;
}

}  // namespace

std::string pickEncoder(const std::string& wanted) {
  if (wanted != "auto") return hasElement(elementFor(wanted)) ? elementFor(wanted) : "";
  for (const char* candidate : {"nvv4l2h264enc", "x264enc", "openh264enc"})
    if (hasElement(candidate)) return candidate;
  return "";
}

std::string missingEncoder(const std::string& wanted) {
  if (!pickEncoder(wanted).empty()) return "";
  return wanted == "auto" ? "no H.264 encoder is installed (Debian: gstreamer1.0-plugins-ugly for x264enc)"
                          : "encoder '" + wanted + "' (" + elementFor(wanted) + ") is not installed here";
}

struct VideoOutput::Impl {
  VideoOptions o;
  std::string encoderName;
  Owned<GstElement> pipeline, appsrc, encoder, encoded;
  GstBufferPool* pool = nullptr;
  GstVideoInfo info{};
  bool finished = false;

  // RTSP: the server runs on its own main loop; each viewer has a media of its own (not shared),
  // fed from the one encoder through its own appsrc, so that a viewer who falls behind holds up
  // no one else: its feed fills and its frames are dropped there.
  GMainContext* context = nullptr;
  GMainLoop* loop = nullptr;
  std::thread loopThread;
  glib::Owned<GstRTSPServer> server;
  GSource* serverSource = nullptr;
  int boundPort = -1;
  struct Feed {
    GstElement* appsrc = nullptr;  // the media's appsrc, referenced while prepared
    bool started = false;          // it has had its first key frame
    bool keyFrameAsked = false;    // and the encoder has been asked for one
  };
  std::mutex feedMutex;
  std::vector<Feed> feeds;
  guint64 feedMaxBytes = 0;  // kFeedMaxSeconds of stream at the set bit rate, at least 1 MiB
  std::atomic<int> clients{0};
  std::atomic<uint64_t> viewersDropped{0}, viewerFramesDropped{0};
  GSource* stallWatch = nullptr;
  std::unique_ptr<RtspPublisher> publisher;

  ~Impl() {
    publisher.reset();
    stopServer();
    if (pipeline) gst_element_set_state(pipeline.get(), GST_STATE_NULL);
    if (pool) {
      gst_buffer_pool_set_active(pool, FALSE);
      gst_object_unref(pool);
    }
  }

  void startPipeline() {
    std::string caps = std::string("video/x-raw,format=") + (o.channels == 3 ? "RGB" : "GRAY8") +
                       ",width=" + std::to_string(o.width) + ",height=" + std::to_string(o.height) +
                       ",framerate=" + std::to_string(o.fps) + "/1";
    std::string description =
        "appsrc name=src is-live=true format=time block=false caps=" + caps + " ! " + encoderChain(encoderName, o) +
        " ! h264parse config-interval=-1 ! video/x-h264,stream-format=byte-stream,alignment=au ! tee name=t "
        "allow-not-linked=true"
        " t. ! queue leaky=downstream max-size-buffers=8 ! appsink name=encoded sync=false max-buffers=8 drop=true";
    if (!o.mp4.empty()) {
      description += " t. ! queue ! h264parse ! splitmuxsink name=mp4 muxer-factory=mp4mux location=\"" + o.mp4 + "\"";
      if (o.mp4MaxSeconds > 0)
        description += " max-size-time=" + std::to_string(static_cast<guint64>(o.mp4MaxSeconds * GST_SECOND));
      if (o.mp4MaxMegabytes > 0)
        description += " max-size-bytes=" + std::to_string(static_cast<guint64>(o.mp4MaxMegabytes * 1e6));
    }
    pipeline = parsePipeline(description);
    appsrc.reset(gst_bin_get_by_name(GST_BIN(pipeline.get()), "src"));
    encoder.reset(gst_bin_get_by_name(GST_BIN(pipeline.get()), "encoder"));
    encoded.reset(gst_bin_get_by_name(GST_BIN(pipeline.get()), "encoded"));

    keepOnlyErrorsOnBus(pipeline.get());

    GstAppSinkCallbacks callbacks{};
    callbacks.new_sample = [](GstAppSink* sink, gpointer self) { return static_cast<Impl*>(self)->onEncoded(sink); };
    gst_app_sink_set_callbacks(GST_APP_SINK(encoded.get()), &callbacks, this, nullptr);

    OwnedCaps rawCaps(gst_caps_from_string(caps.c_str()));
    gst_video_info_from_caps(&info, rawCaps.get());
    pool = gst_buffer_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, rawCaps.get(), static_cast<guint>(info.size), o.queueFrames,
                                      o.queueFrames);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE))
      throw std::runtime_error("video: cannot set up the frame buffer pool");

    setState(pipeline.get(), GST_STATE_PLAYING, "video pipeline (" + encoderName + ")");
  }

  GstFlowReturn onEncoded(GstAppSink* sink) {
    OwnedSample sample(gst_app_sink_pull_sample(sink));
    if (!sample) return GST_FLOW_OK;
    GstBuffer* buffer = gst_sample_get_buffer(sample.get());
    if (o.onEncoded) o.onEncoded(GST_BUFFER_PTS(buffer), gst_buffer_get_size(buffer));
    if (publisher) publisher->push(buffer);
    std::lock_guard lock(feedMutex);
    for (Feed& feed : feeds) feedOne(feed, buffer);
    return GST_FLOW_OK;
  }

  void feedOne(Feed& feed, GstBuffer* buffer) {
    if (gst_app_src_get_current_level_bytes(GST_APP_SRC(feed.appsrc)) > feedMaxBytes) {  // this viewer is behind
      ++viewerFramesDropped;
      feed.started = false;  // it goes on from a key frame
      return;
    }
    // The media runs on its own clock: the frame is stamped with that pipeline's running time now,
    // which only PLAYING defines. Before, the feed may have the clock but not yet its base time,
    // and a frame stamped then would hold the media's sink until the clock reaches its absolute time.
    GstState state = GST_STATE_NULL;
    gst_element_get_state(feed.appsrc, &state, nullptr, 0);
    Owned<GstClock> clock(gst_element_get_clock(feed.appsrc));
    if (state != GST_STATE_PLAYING || !clock) return;
    // A new viewer's decoder starts at a key frame: until one comes, ask the encoder for it and
    // leave the frames that depend on earlier ones out.
    if (!feed.started) {
      if (GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)) {
        if (!feed.keyFrameAsked) askForKeyFrame();
        feed.keyFrameAsked = true;
        return;
      }
      feed.started = true;
      feed.keyFrameAsked = false;
    }
    GstBuffer* copy = gst_buffer_copy(buffer);
    GST_BUFFER_PTS(copy) = GST_BUFFER_DTS(copy) =
        gst_clock_get_time(clock.get()) - gst_element_get_base_time(feed.appsrc);
    GST_BUFFER_DURATION(copy) = GST_SECOND / static_cast<guint64>(o.fps);
    gst_app_src_push_buffer(GST_APP_SRC(feed.appsrc), copy);
  }

  void askForKeyFrame() {
    Owned<GstPad> pad(gst_element_get_static_pad(encoder.get(), "src"));
    gst_pad_send_event(pad.get(), gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
  }

  void startServer() {
    feedMaxBytes = std::max<guint64>(1u << 20, static_cast<guint64>(kFeedMaxSeconds * o.bitrateKbps * 1000 / 8));
    context = g_main_context_new();
    loop = g_main_loop_new(context, FALSE);
    server.reset(gst_rtsp_server_new());
    gst_rtsp_server_set_address(server.get(), o.rtspAddress.c_str());
    gst_rtsp_server_set_service(server.get(), std::to_string(o.rtspPort).c_str());
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_launch(factory,
                                      "( appsrc name=feed is-live=true format=time block=false "
                                      "caps=video/x-h264,stream-format=byte-stream,alignment=au"
                                      " ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 )");
    gst_rtsp_media_factory_set_shared(factory, FALSE);
    if (!o.rtspUsers.empty()) {
      // Every listed user may see the stream; anyone else gets 401 (Digest offered beside Basic,
      // so that clients which can keep the password off the wire).
      glib::Owned<GstRTSPAuth> auth(gst_rtsp_auth_new());
      gst_rtsp_auth_set_supported_methods(auth.get(),
                                          static_cast<GstRTSPAuthMethod>(GST_RTSP_AUTH_BASIC | GST_RTSP_AUTH_DIGEST));
      for (const auto& [user, password] : o.rtspUsers) {
        GstRTSPToken* token = gst_rtsp_token_new(GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, "viewer", nullptr);
        gchar* basic = gst_rtsp_auth_make_basic(user.c_str(), password.c_str());
        gst_rtsp_auth_add_basic(auth.get(), basic, token);
        gst_rtsp_auth_add_digest(auth.get(), user.c_str(), password.c_str(), token);
        g_free(basic);
        gst_rtsp_token_unref(token);
      }
      gst_rtsp_server_set_auth(server.get(), auth.get());
      gst_rtsp_media_factory_add_role(factory, "viewer", GST_RTSP_PERM_MEDIA_FACTORY_ACCESS, G_TYPE_BOOLEAN, TRUE,
                                      GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, G_TYPE_BOOLEAN, TRUE, nullptr);
    }
    g_signal_connect(factory, "media-configure",
                     G_CALLBACK(+[](GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer self) {
                       static_cast<Impl*>(self)->onMediaConfigure(media);
                     }),
                     this);
    glib::Owned<GstRTSPMountPoints> mounts(gst_rtsp_server_get_mount_points(server.get()));
    gst_rtsp_mount_points_add_factory(mounts.get(), o.rtspMount.c_str(), factory);
    g_signal_connect(
        server.get(), "client-connected", G_CALLBACK(+[](GstRTSPServer*, GstRTSPClient* client, gpointer self) {
          auto* impl = static_cast<Impl*>(self);
          ++impl->clients;
          g_signal_connect(client, "closed",
                           G_CALLBACK(+[](GstRTSPClient*, gpointer s) { --static_cast<Impl*>(s)->clients; }), impl);
          // A viewer joining a running (shared) media starts at a key frame: make one now (the
          // signal comes once the viewer's transport is active).
          g_signal_connect(client, "play-request", G_CALLBACK(+[](GstRTSPClient*, GstRTSPContext*, gpointer s) {
                             static_cast<Impl*>(s)->askForKeyFrame();
                           }),
                           impl);
        }),
        this);
    GError* error = nullptr;
    serverSource = gst_rtsp_server_create_source(server.get(), nullptr, &error);
    if (!serverSource) {
      std::string text = error ? error->message : "unknown reason";
      if (error) g_error_free(error);
      throw std::runtime_error("video: cannot serve RTSP on " + o.rtspAddress + ":" + std::to_string(o.rtspPort) +
                               ": " + text);
    }
    g_source_attach(serverSource, context);
    boundPort = gst_rtsp_server_get_bound_port(server.get());
    stallWatch = g_timeout_source_new(250);
    g_source_set_callback(
        stallWatch,
        [](gpointer self) -> gboolean {
          auto* impl = static_cast<Impl*>(self);
          gst_rtsp_server_client_filter(impl->server.get(), dropStalledClient, impl);
          return G_SOURCE_CONTINUE;
        },
        this, nullptr);
    g_source_attach(stallWatch, context);
    loopThread = std::thread([this] {
      g_main_context_push_thread_default(context);
      g_main_loop_run(loop);
      g_main_context_pop_thread_default(context);
    });
  }

  void onMediaConfigure(GstRTSPMedia* media) {
    Owned<GstElement> bin(gst_rtsp_media_get_element(media));
    GstElement* appsrc = gst_bin_get_by_name_recurse_up(GST_BIN(bin.get()), "feed");
    {
      std::lock_guard lock(feedMutex);
      feeds.push_back({appsrc});
    }
    // The media keeps a reference, so no newer feed can take this one's address before it goes.
    g_object_set_data_full(G_OBJECT(media), "polarpipe-feed", gst_object_ref(appsrc), gst_object_unref);
    g_signal_connect(media, "unprepared", G_CALLBACK(+[](GstRTSPMedia* unprepared, gpointer self) {
                       auto* impl = static_cast<Impl*>(self);
                       void* gone = g_object_get_data(G_OBJECT(unprepared), "polarpipe-feed");
                       std::lock_guard lock(impl->feedMutex);
                       for (auto it = impl->feeds.begin(); it != impl->feeds.end(); ++it)
                         if (it->appsrc == gone) {
                           gst_object_unref(it->appsrc);
                           impl->feeds.erase(it);
                           break;
                         }
                     }),
                     this);
  }

  static GstRTSPFilterResult removeClient(GstRTSPServer*, GstRTSPClient*, gpointer) { return GST_RTSP_FILTER_REMOVE; }

  // A viewer whose connection has data waiting but has acknowledged nothing for rtspStallTimeoutS
  // (a laptop on a dead Wi-Fi link) is closed: its media, its feed and its session go with it.
  struct Progress {
    uint64_t acked = 0;
    gint64 since = 0;  // g_get_monotonic_time() of the last progress, in microseconds
  };
  static GstRTSPFilterResult dropStalledClient(GstRTSPServer*, GstRTSPClient* client, gpointer self) {
    auto* impl = static_cast<Impl*>(self);
    GstRTSPConnection* connection = gst_rtsp_client_get_connection(client);
    GSocket* socket = connection ? gst_rtsp_connection_get_write_socket(connection) : nullptr;
    if (!socket) return GST_RTSP_FILTER_KEEP;
    int fd = g_socket_get_fd(socket), waiting = 0;
    tcp_info info{};
    socklen_t length = sizeof info;
    if (ioctl(fd, SIOCOUTQ, &waiting) != 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0)
      return GST_RTSP_FILTER_KEEP;
    static GQuark key = g_quark_from_static_string("polarpipe-progress");
    auto* progress = static_cast<Progress*>(g_object_get_qdata(G_OBJECT(client), key));
    if (!progress) {
      progress = new Progress;
      g_object_set_qdata_full(G_OBJECT(client), key, progress, [](gpointer p) { delete static_cast<Progress*>(p); });
    }
    gint64 now = g_get_monotonic_time();
    if (waiting == 0 || info.tcpi_bytes_acked != progress->acked || progress->since == 0) {
      progress->acked = info.tcpi_bytes_acked;
      progress->since = now;
      return GST_RTSP_FILTER_KEEP;
    }
    double stalledS = static_cast<double>(now - progress->since) / 1e6;
    if (stalledS < impl->o.rtspStallTimeoutS) return GST_RTSP_FILTER_KEEP;
    ++impl->viewersDropped;
    spdlog::warn("video: RTSP viewer {} took no data for {:.1f} s ({} bytes waiting); dropped",
                 gst_rtsp_connection_get_ip(connection), stalledS, waiting);
    return GST_RTSP_FILTER_REMOVE;
  }

  void stopServer() {
    if (!server) return;
    gst_rtsp_server_client_filter(server.get(), removeClient, nullptr);
    for (GSource* source : {stallWatch, serverSource})
      if (source) {
        g_source_destroy(source);
        g_source_unref(source);
      }
    quitLoop(loop, context, loopThread);
    {
      std::lock_guard lock(feedMutex);
      for (Feed& feed : feeds) gst_object_unref(feed.appsrc);
      feeds.clear();
    }
    server.reset();
    g_main_loop_unref(loop);
    g_main_context_unref(context);
  }
};

VideoOutput::VideoOutput(const VideoOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.o = options;
  if (options.rtspPort < 0 && options.mp4.empty() && options.publishUrl.empty() && !options.onEncoded)
    throw std::runtime_error("video: nothing to do: set rtsp_port, mp4 and/or publish");
  d.encoderName = pickEncoder(options.encoder);
  if (d.encoderName.empty()) throw std::runtime_error("video: " + missingEncoder(options.encoder));
  if (!options.mp4.empty()) {
    std::filesystem::path parent = std::filesystem::path(options.mp4).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec || access(parent.empty() ? "." : parent.c_str(), W_OK) != 0)
      throw std::runtime_error("video: cannot write " + options.mp4 + ": folder " +
                               (parent.empty() ? "." : parent.string()) + " is not writable");
  }
  if (!options.publishUrl.empty() && !hasElement("rtspclientsink"))
    throw std::runtime_error("video: publishing needs rtspclientsink (Debian: gstreamer1.0-rtsp)");
  d.startPipeline();
  if (options.rtspPort >= 0) d.startServer();
  if (!options.publishUrl.empty())
    d.publisher = std::make_unique<RtspPublisher>(options.publishUrl, options.publishProtocol, options.fps,
                                                  options.bitrateKbps, [&d] { d.askForKeyFrame(); });
}

VideoOutput::~VideoOutput() = default;

bool VideoOutput::push(const Image& image, uint64_t index) {
  Impl& d = *impl_;
  if (std::string error = pendingError(d.pipeline.get()); !error.empty()) throw std::runtime_error("video: " + error);
  GstBuffer* buffer = nullptr;
  GstBufferPoolAcquireParams params{};
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  if (gst_buffer_pool_acquire_buffer(d.pool, &buffer, &params) != GST_FLOW_OK) return false;  // the encoder is behind
  try {
    copyRows(image, buffer, d.info);
  } catch (...) {
    gst_buffer_unref(buffer);
    throw;
  }
  GST_BUFFER_PTS(buffer) = gst_util_uint64_scale(index, GST_SECOND, static_cast<guint64>(d.o.fps));
  GST_BUFFER_DURATION(buffer) = GST_SECOND / static_cast<guint64>(d.o.fps);
  if (gst_app_src_push_buffer(GST_APP_SRC(d.appsrc.get()), buffer) != GST_FLOW_OK)
    throw std::runtime_error("video: the pipeline stopped taking frames");
  return true;
}

void VideoOutput::finish() {
  Impl& d = *impl_;
  if (d.finished) return;
  d.finished = true;
  gst_app_src_end_of_stream(GST_APP_SRC(d.appsrc.get()));
  std::string error = waitForEosOrError(d.pipeline.get(), 60 * GST_SECOND);
  if (d.publisher) d.publisher->stop();
  d.stopServer();
  gst_element_set_state(d.pipeline.get(), GST_STATE_NULL);
  if (!error.empty()) throw std::runtime_error("video: " + error);
}

std::string VideoOutput::rtspUrl() const {
  if (impl_->boundPort < 0) return "";
  std::string host = impl_->o.rtspAddress == "0.0.0.0" ? "127.0.0.1" : impl_->o.rtspAddress;
  return "rtsp://" + host + ":" + std::to_string(impl_->boundPort) + impl_->o.rtspMount;
}

const std::string& VideoOutput::encoder() const { return impl_->encoderName; }
int VideoOutput::rtspClients() const { return impl_->clients.load(); }
const std::atomic<uint64_t>& VideoOutput::rtspViewersDropped() const { return impl_->viewersDropped; }
const std::atomic<uint64_t>& VideoOutput::rtspViewerFramesDropped() const { return impl_->viewerFramesDropped; }
const RtspPublisher* VideoOutput::publisher() const { return impl_->publisher.get(); }

}  // namespace pp::gst
