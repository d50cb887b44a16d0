#include "pipeline/gst/gst_support.hpp"

#include <cstring>
#include <mutex>

namespace pp::gst {

namespace {

std::string describeError(GstMessage* message) {
  GError* error = nullptr;
  gchar* debug = nullptr;
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) gst_message_parse_error(message, &error, &debug);
  std::string text = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(message))) + ": " + (error ? error->message : "error");
  if (debug) text += std::string(" (") + debug + ")";
  if (error) g_error_free(error);
  g_free(debug);
  return text;
}

}  // namespace

void ensureInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    GError* error = nullptr;
    if (!gst_init_check(nullptr, nullptr, &error)) {
      std::string text = error ? error->message : "unknown reason";
      if (error) g_error_free(error);
      throw std::runtime_error("GStreamer could not start: " + text);
    }
  });
}

bool hasElement(const std::string& factory) {
  ensureInit();
  Owned<GstElementFactory> found(gst_element_factory_find(factory.c_str()));
  return found != nullptr;
}

Owned<GstElement> parsePipeline(const std::string& description) {
  ensureInit();
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch_full(description.c_str(), nullptr, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (error) {
    std::string text = error->message;
    g_error_free(error);
    if (pipeline) gst_object_unref(pipeline);
    throw std::runtime_error("GStreamer cannot build '" + description + "': " + text);
  }
  return Owned<GstElement>(pipeline);
}

std::string waitForEosOrError(GstElement* pipeline, GstClockTime timeoutNs) {
  Owned<GstBus> bus(gst_element_get_bus(pipeline));
  GstMessage* message = gst_bus_timed_pop_filtered(bus.get(), timeoutNs,
                                                   static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (!message)
    throw std::runtime_error("GStreamer pipeline did not finish within " + std::to_string(timeoutNs / GST_SECOND) +
                             " s");
  std::string result = GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR ? describeError(message) : "";
  gst_message_unref(message);
  return result;
}

std::string pendingError(GstElement* pipeline) {
  Owned<GstBus> bus(gst_element_get_bus(pipeline));
  GstMessage* message = gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR);
  if (!message) return "";
  std::string result = describeError(message);
  gst_message_unref(message);
  return result;
}

void keepOnlyErrorsOnBus(GstElement* pipeline) {
  Owned<GstBus> bus(gst_element_get_bus(pipeline));
  gst_bus_set_sync_handler(
      bus.get(),
      [](GstBus*, GstMessage* m, gpointer) {
        return GST_MESSAGE_TYPE(m) & (GST_MESSAGE_ERROR | GST_MESSAGE_EOS) ? GST_BUS_PASS : GST_BUS_DROP;
      },
      nullptr, nullptr);
}

void copyRows(const Image& image, GstBuffer* buffer, const GstVideoInfo& info) {
  GstVideoFrame frame;
  GstVideoInfo layout = info;  // GStreamer before 1.20 takes it non-const
  if (!gst_video_frame_map(&frame, &layout, buffer, GST_MAP_WRITE))
    throw std::runtime_error("cannot map a GStreamer frame buffer for writing");
  auto* dst = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  size_t stride = static_cast<size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0));
  size_t rowBytes = static_cast<size_t>(image.width()) * pixelBytes(image.format());
  for (int y = 0; y < image.height(); ++y)
    std::memcpy(dst + stride * static_cast<size_t>(y),
                static_cast<const uint8_t*>(image.data()) + image.pitch() * static_cast<size_t>(y), rowBytes);
  gst_video_frame_unmap(&frame);
}

void setState(GstElement* pipeline, GstState state, const std::string& what) {
  // Asynchronous changes complete once data flows (prerolling needs the first frame); opening
  // files, devices and sockets happens synchronously and fails here.
  GstStateChangeReturn result = gst_element_set_state(pipeline, state);
  if (result == GST_STATE_CHANGE_FAILURE) {
    std::string error = pendingError(pipeline);
    throw std::runtime_error(what + " failed to start" + (error.empty() ? "" : ": " + error));
  }
}

void quitLoop(GMainLoop* loop, GMainContext* context, std::thread& thread) {
  GSource* quit = g_idle_source_new();
  g_source_set_callback(
      quit,
      [](gpointer l) -> gboolean {
        g_main_loop_quit(static_cast<GMainLoop*>(l));
        return G_SOURCE_REMOVE;
      },
      loop, nullptr);
  g_source_attach(quit, context);
  g_source_unref(quit);
  if (thread.joinable()) thread.join();
}

}  // namespace pp::gst
