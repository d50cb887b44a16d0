// Sink `record`: the sensor frames, lossless, with their metadata, into a Matroska file (see
// recording.hpp). It keeps every frame it is given: when the disk is slow it waits, and a live
// source then drops (and counts) frames before the graph, never inside the recording.
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include <filesystem>
#include <thread>

#include "pipeline/gst/gst_support.hpp"
#include "pipeline/gst/recording.hpp"
#include "pipeline/output_path.hpp"
#include "pipeline/registry.hpp"

namespace pp::gst {

namespace {

// A buffer holding a copy of `text` (gst_buffer_new_memdup is GStreamer 1.20 and later).
GstBuffer* textBuffer(const std::string& text) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, text.size(), nullptr);
  gst_buffer_fill(buffer, 0, text.data(), text.size());
  return buffer;
}

constexpr guint kBuffersPerPlane = 4;

struct RecordParams {
  Path path;
  bool overwrite = false;
};

struct PlaneWriter {
  std::string port;
  Format format;
  Owned<GstElement> appsrc;
  GstBufferPool* pool = nullptr;
  GstVideoInfo info{};
};

class RecordSink : public Sink {
 public:
  using Params = RecordParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("path", &Params::path,
                 "the recording, a Matroska file (.mkv): raw GRAY8 tracks, one per input, and a metadata text track",
                 anyPath())
            .add("overwrite", &Params::overwrite, "replace an existing file instead of refusing to start");
    return schema;
  }

  RecordSink(const Params& p, ParamContext& ctx) : p_(p) {
    if (p.path.empty())
      ctx.error("path is required: the .mkv file to record to");
    else if (!p.overwrite && std::filesystem::exists(p.path.value))
      ctx.diagnostics.error(ctx.node["path"], ctx.keyPath + ".path",
                            p.path.value + " exists; set overwrite: true to replace it");
  }

  ~RecordSink() override {
    if (pipeline_) gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    for (auto& plane : planes_)
      if (plane.pool) {
        gst_buffer_pool_set_active(plane.pool, FALSE);
        gst_object_unref(plane.pool);
      }
  }

  void setup(PortSetup& ports) override {
    auto inputs = ports.connectedInputs();
    if (inputs.empty()) ports.fail("connect the raw sensor planes to record under inputs");
    std::string description;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const PortSpec* spec = ports.imageInput(inputs[i], {{Depth::u8, 1}, {Depth::u16, 1}});
      if (!spec) return;
      PlaneRecord shape{inputs[i], spec->format, spec->width, spec->height, 0};
      std::string caps = "video/x-raw,format=GRAY8,width=" + std::to_string(shape.trackWidth()) +
                         ",height=" + std::to_string(spec->height) + ",framerate=0/1";
      description += "appsrc name=plane" + std::to_string(i) + " format=time caps=" + caps + " ! queue ! mux.video_" +
                     std::to_string(i) + " ";
      planes_.push_back({inputs[i], spec->format, nullptr, nullptr, {}});
    }
    if (ports.devices() != PortSetup::Devices::use) {  // validate: checked, not written (an existing recording stays)
      if (std::string why = whyNotWritable(p_.path.value); !why.empty())
        ports.fail("cannot write " + p_.path.value + ": " + why);
      return;
    }
    description +=
        "appsrc name=meta format=time caps=text/x-raw,format=utf8 ! queue ! mux.subtitle_0 matroskamux name=mux ! "
        "filesink name=file";
    try {
      std::filesystem::path parent = std::filesystem::path(p_.path.value).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      pipeline_ = parsePipeline(description);
      Owned<GstElement> file(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "file"));
      g_object_set(file.get(), "location", p_.path.value.c_str(), nullptr);
      meta_.reset(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "meta"));
      for (size_t i = 0; i < planes_.size(); ++i) {
        PlaneWriter& plane = planes_[i];
        plane.appsrc.reset(gst_bin_get_by_name(GST_BIN(pipeline_.get()), ("plane" + std::to_string(i)).c_str()));
        GstCaps* appsrcCaps = nullptr;
        g_object_get(plane.appsrc.get(), "caps", &appsrcCaps, nullptr);
        OwnedCaps caps(appsrcCaps);
        gst_video_info_from_caps(&plane.info, caps.get());
        plane.pool = gst_buffer_pool_new();
        GstStructure* config = gst_buffer_pool_get_config(plane.pool);
        gst_buffer_pool_config_set_params(config, caps.get(), static_cast<guint>(plane.info.size), kBuffersPerPlane,
                                          kBuffersPerPlane);
        if (!gst_buffer_pool_set_config(plane.pool, config) || !gst_buffer_pool_set_active(plane.pool, TRUE))
          throw std::runtime_error("record: cannot set up a buffer pool");
      }
      keepOnlyErrorsOnBus(pipeline_.get());
      setState(pipeline_.get(), GST_STATE_PLAYING, "recording to " + p_.path.value);
    } catch (const std::exception& e) {
      ports.fail(e.what());
    }
  }

  void consume(const SinkFrame& frame) override {
    const FrameMeta& meta = frame.meta();
    if (frames_ == 0) firstArrival_ = meta.received;
    GstClockTime pts = static_cast<GstClockTime>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(meta.received - firstArrival_).count());
    pts = std::max(pts, lastPts_);  // arrival order is frame order; never step back
    lastPts_ = pts;

    FrameRecord record;
    record.frame = frames_;
    record.meta = meta;
    record.hostTimeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            (std::chrono::system_clock::now() - (Clock::now() - meta.received)).time_since_epoch())
                            .count();
    for (PlaneWriter& plane : planes_) {
      const Image& image = frame.in(plane.port);
      record.planes.push_back({plane.port, image.format(), image.width(), image.height(), crcOf(image)});
      push(plane.appsrc.get(), planeBuffer(plane, image), pts);
    }
    std::string line = encodeFrame(record);
    push(meta_.get(), textBuffer(line), pts);
    ++frames_;
  }

  void finish() override {
    if (!pipeline_) return;
    std::string end = encodeEnd(frames_);
    push(meta_.get(), textBuffer(end), lastPts_ + GST_MSECOND);
    for (auto& plane : planes_) gst_app_src_end_of_stream(GST_APP_SRC(plane.appsrc.get()));
    gst_app_src_end_of_stream(GST_APP_SRC(meta_.get()));
    std::string error = waitForEosOrError(pipeline_.get(), 60 * GST_SECOND);
    gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    pipeline_.reset();
    if (!error.empty()) throw std::runtime_error("record: " + p_.path.value + ": " + error);
  }

  std::string destination() const override {
    return p_.path.value + " (" + std::to_string(frames_.load()) + " raw frames)";
  }
  std::vector<Counter> counters() const override {
    return {{"recorded_frames", "Raw frames written to the recording.", &frames_}};
  }

 private:
  // A pooled buffer holding the plane's rows; waits for a free one (the writer is behind).
  GstBuffer* planeBuffer(PlaneWriter& plane, const Image& image) {
    GstBuffer* buffer = nullptr;
    GstBufferPoolAcquireParams params{};
    params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
    while (gst_buffer_pool_acquire_buffer(plane.pool, &buffer, &params) != GST_FLOW_OK) {
      checkPipeline();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    try {
      copyRows(image, buffer, plane.info);
    } catch (...) {
      gst_buffer_unref(buffer);
      throw;
    }
    return buffer;
  }

  void push(GstElement* appsrc, GstBuffer* buffer, GstClockTime pts) {
    GST_BUFFER_PTS(buffer) = pts;
    if (gst_app_src_push_buffer(GST_APP_SRC(appsrc), buffer) != GST_FLOW_OK)
      checkPipeline("the recording stopped taking frames");
  }

  void checkPipeline(const std::string& otherwise = "") {
    std::string error = pendingError(pipeline_.get());
    if (!error.empty()) throw std::runtime_error("record: " + p_.path.value + ": " + error);
    if (!otherwise.empty()) throw std::runtime_error("record: " + p_.path.value + ": " + otherwise);
  }

  Params p_;
  Owned<GstElement> pipeline_, meta_;
  std::vector<PlaneWriter> planes_;
  std::atomic<uint64_t> frames_{0};
  Clock::time_point firstArrival_{};
  GstClockTime lastPts_ = 0;
};

}  // namespace

void registerRecordSink(Registry& registry) {
  registry.add<RecordSink>(
      Role::sink, "record",
      "raw sensor frames, lossless, with per-frame metadata, into a Matroska file (replay reads it)");
}

}  // namespace pp::gst
