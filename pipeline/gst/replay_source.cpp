// Source `replay`: plays a raw recording (sink `record`) through the graph exactly as the camera
// delivered it: same planes, same metadata, at the recorded pace or as fast as the graph takes
// frames. Every plane is checked against its CRC; damage stops the replay with the frame number,
// after the intact frames before it have gone through.
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "pipeline/gst/gst_support.hpp"
#include "pipeline/gst/recording.hpp"
#include "pipeline/registry.hpp"

namespace pp::gst {

namespace {

constexpr GstClockTime kPullTimeout = 10 * GST_SECOND;

// Whether the last megabytes of the file hold the end record's text (the text track is stored as
// it is): a file that has it but whose frames stop early is damaged inside, not cut short.
bool endsWithItsEndRecord(const std::string& path) {
  constexpr std::streamoff kTail = 4 << 20;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - kTail);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  return tail.find(kEndRecord) != std::string::npos;
}

// One pass over a recording: demuxes the metadata line and plane samples of each frame in turn.
class RecordingReader {
 public:
  explicit RecordingReader(const std::string& path) : path_(path) {
    pipeline_ = parsePipeline("filesrc name=file ! matroskademux name=demux");
    Owned<GstElement> file(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "file"));
    g_object_set(file.get(), "location", path.c_str(), nullptr);
    Owned<GstElement> demux(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "demux"));
    g_signal_connect(demux.get(), "pad-added", G_CALLBACK(+[](GstElement*, GstPad* pad, gpointer self) {
                       static_cast<RecordingReader*>(self)->onPad(pad);
                     }),
                     this);
    g_signal_connect(demux.get(), "no-more-pads", G_CALLBACK(+[](GstElement*, gpointer self) {
                       auto* reader = static_cast<RecordingReader*>(self);
                       std::lock_guard lock(reader->mutex_);
                       reader->allPads_ = true;
                       reader->padsChanged_.notify_all();
                     }),
                     this);
    keepOnlyErrorsOnBus(pipeline_.get());
    gst_element_set_state(pipeline_.get(), GST_STATE_PLAYING);
    std::unique_lock lock(mutex_);
    for (int waited = 0; !allPads_ && waited < 100; ++waited) {
      padsChanged_.wait_for(lock, std::chrono::milliseconds(100));
      lock.unlock();
      std::string error = pendingError(pipeline_.get());
      lock.lock();
      if (!error.empty()) throw std::runtime_error("cannot read " + path + " as a recording: " + error);
    }
    if (!allPads_ || !sinks_.count("subtitle_0") || !sinks_.count("video_0"))
      throw std::runtime_error(path + " is not a polarpipe recording (no metadata track or no video track)");
  }

  ~RecordingReader() { gst_element_set_state(pipeline_.get(), GST_STATE_NULL); }

  // The next line of metadata; nullopt at the end of the file.
  std::optional<std::string> nextLine() {
    OwnedSample sample = pull("subtitle_0");
    if (!sample) return std::nullopt;
    GstBuffer* buffer = gst_sample_get_buffer(sample.get());
    std::string line(gst_buffer_get_size(buffer), '\0');
    gst_buffer_extract(buffer, 0, line.data(), line.size());
    return line;
  }

  // Plane `index` of the current frame into `out`; false when the track ended first.
  bool readPlane(size_t index, const PlaneRecord& plane, Image& out) {
    OwnedSample sample = pull("video_" + std::to_string(index));
    if (!sample) return false;
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample.get())) ||
        GST_VIDEO_INFO_WIDTH(&info) != plane.trackWidth() || GST_VIDEO_INFO_HEIGHT(&info) != plane.height)
      throw std::runtime_error("plane '" + plane.port + "' track does not have the size its metadata gives");
    GstVideoFrame frame;
    if (!gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample.get()), GST_MAP_READ))
      throw std::runtime_error("plane '" + plane.port + "' is shorter than a frame");
    const auto* src = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
    size_t stride = static_cast<size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0));
    for (int y = 0; y < plane.height; ++y)
      std::memcpy(static_cast<uint8_t*>(out.data()) + out.pitch() * static_cast<size_t>(y),
                  src + stride * static_cast<size_t>(y), static_cast<size_t>(plane.trackWidth()));
    gst_video_frame_unmap(&frame);
    return true;
  }

 private:
  void onPad(GstPad* pad) {
    std::unique_ptr<gchar, decltype(&g_free)> name(gst_pad_get_name(pad), &g_free);
    GstElement* queue = gst_element_factory_make("queue", nullptr);
    GstElement* sink = gst_element_factory_make("appsink", nullptr);
    g_object_set(sink, "sync", FALSE, nullptr);
    gst_bin_add_many(GST_BIN(pipeline_.get()), queue, sink, nullptr);
    gst_element_link(queue, sink);
    Owned<GstPad> queueSink(gst_element_get_static_pad(queue, "sink"));
    gst_pad_link(pad, queueSink.get());
    gst_element_sync_state_with_parent(queue);
    gst_element_sync_state_with_parent(sink);
    std::lock_guard lock(mutex_);
    sinks_[name.get()] = sink;
  }

  OwnedSample pull(const std::string& pad) {
    GstElement* sink = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = sinks_.find(pad);
      if (it == sinks_.end()) throw std::runtime_error("the file has no track " + pad);
      sink = it->second;
    }
    OwnedSample sample(gst_app_sink_try_pull_sample(GST_APP_SINK(sink), kPullTimeout));
    if (sample) return sample;
    std::string error = pendingError(pipeline_.get());
    if (!error.empty()) throw std::runtime_error(error);
    if (!gst_app_sink_is_eos(GST_APP_SINK(sink)))
      throw std::runtime_error("no data from track " + pad + " within 10 s");
    return nullptr;
  }

  std::string path_;
  Owned<GstElement> pipeline_;
  std::mutex mutex_;
  std::condition_variable padsChanged_;
  std::map<std::string, GstElement*> sinks_;  // pad name -> appsink (owned by the pipeline)
  bool allPads_ = false;
};

struct ReplayParams {
  Path path;
  std::string pace = "recorded";
  bool loop = false;
  int start = 0;
};

class ReplaySource : public Source {
 public:
  using Params = ReplayParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("path", &Params::path, "a recording made by the record sink (.mkv)", existingFile())
            .add("pace", &Params::pace,
                 "recorded: frames come at the times they were recorded; fast: as fast as the graph takes them",
                 oneOf({"recorded", "fast"}))
            .add("loop", &Params::loop, "start again (at start) after the last frame")
            .add("start", &Params::start, "first frame to play (0-based index in the file)", intIn(0, 1 << 30));
    return schema;
  }

  ReplaySource(const Params& p, ParamContext&) : p_(p) {}

  void setup(PortSetup& ports) override {
    try {
      open();
      if (!pending_) throw std::runtime_error(p_.path.value + " holds no frames");
      if (p_.start > 0 && pending_->frame.frame < static_cast<uint64_t>(p_.start) && !skipToStart())
        throw std::runtime_error(p_.path.value + " has fewer than " + std::to_string(p_.start + 1) +
                                 " frames (start: " + std::to_string(p_.start) + ")");
      for (const PlaneRecord& plane : pending_->frame.planes)
        ports.output(plane.port, PortSpec::image(plane.format, plane.width, plane.height));
      planes_ = pending_->frame.planes;
    } catch (const std::exception& e) {
      ports.fail(e.what());
    }
  }

  bool live() const override { return false; }

  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    if (!damage_.empty()) throw std::runtime_error(damage_);
    if (!pending_) {
      if (!p_.loop) return false;
      open();
      if (p_.start > 0) skipToStart();
      due_ = {};
    }
    const FrameRecord& record = pending_->frame;
    pace(record, stopping);
    if (stopping()) return false;
    if (record.planes.size() != planes_.size())
      damaged(record.frame, "it has " + std::to_string(record.planes.size()) + " planes, the first had " +
                                std::to_string(planes_.size()));
    for (size_t i = 0; i < planes_.size(); ++i) {
      const PlaneRecord& plane = record.planes[i];
      if (plane.port != planes_[i].port || plane.format != planes_[i].format || plane.width != planes_[i].width ||
          plane.height != planes_[i].height)
        damaged(record.frame, "plane " + plane.port + " differs in name, format or size from the first frame's");
      Image& out = frame.out(plane.port);
      if (!reader_->readPlane(i, plane, out))
        damaged(record.frame, "plane '" + plane.port + "' is missing: the file is truncated");
      if (crcOf(out) != plane.crc) damaged(record.frame, "plane '" + plane.port + "' does not match its checksum");
    }
    FrameMeta& meta = frame.meta();
    meta.sequence = record.meta.sequence;
    meta.cameraTimestampNs = record.meta.cameraTimestampNs;
    meta.cameraFrameId = record.meta.cameraFrameId;
    meta.chunks = record.meta.chunks;
    meta.exposureUs = record.meta.exposureUs;
    meta.gain = record.meta.gain;
    meta.mosaic = record.meta.mosaic;
    meta.bayer = record.meta.bayer;
    meta.angles = record.meta.angles;
    meta.bitDepth = record.meta.bitDepth;
    meta.sampleFormat = record.meta.sampleFormat;
    meta.incomplete = record.meta.incomplete;
    ++replayed_;
    try {  // damage after this frame is reported on the next read, so this frame still goes through
      advance();
    } catch (const std::exception& e) {
      damage_ = e.what();
      pending_ = RecordLine{};
    }
    return true;
  }

  std::vector<Counter> counters() const override {
    return {{"replayed_frames", "Frames read from the recording.", &replayed_}};
  }

 private:
  [[noreturn]] void damaged(uint64_t frame, const std::string& why) {
    throw std::runtime_error(p_.path.value + ": frame " + std::to_string(frame) + ": " + why +
                             " (frames before it were replayed)");
  }

  void open() {
    reader_.reset();
    reader_ = std::make_unique<RecordingReader>(p_.path.value);
    expected_ = 0;
    advance();
  }

  // Reads the next metadata line into pending_ (nullopt after the end line).
  void advance() {
    std::optional<std::string> line;
    try {
      line = reader_->nextLine();
    } catch (const std::exception& e) {
      damaged(expected_, e.what());
    }
    if (!line)
      damaged(expected_, endsWithItsEndRecord(p_.path.value) ? "the file is damaged here: its end record is in the "
                                                               "file, but the frames from this one on cannot be read"
                                                             : "the file ends without its end record: it is truncated");
    RecordLine parsed;
    try {
      parsed = decodeLine(*line);
    } catch (const std::exception& e) {
      damaged(expected_, std::string("bad metadata: ") + e.what());
    }
    if (parsed.end) {
      if (parsed.frames != expected_)
        damaged(expected_, "the end record counts " + std::to_string(parsed.frames) + " frames, the file holds " +
                               std::to_string(expected_));
      pending_.reset();
      return;
    }
    if (parsed.frame.frame != expected_)
      damaged(expected_, "the next readable frame is " + std::to_string(parsed.frame.frame) + ": frames are missing");
    ++expected_;
    pending_ = parsed;
  }

  // Skips to frame `start`, reading (and discarding) the planes before it; false past the end.
  bool skipToStart() {
    Image scratch;
    while (pending_ && pending_->frame.frame < static_cast<uint64_t>(p_.start)) {
      for (size_t i = 0; i < pending_->frame.planes.size(); ++i) {
        const PlaneRecord& plane = pending_->frame.planes[i];
        if (scratch.format() != plane.format || scratch.width() != plane.width || scratch.height() != plane.height)
          scratch = Image(plane.format, plane.width, plane.height, MemoryKind::host);
        if (!reader_->readPlane(i, plane, scratch))
          damaged(pending_->frame.frame, "plane '" + plane.port + "' is missing: the file is truncated");
      }
      advance();
    }
    return pending_.has_value();
  }

  // Recorded pace: frame k waits until (its arrival - the first one's) has passed since the first.
  void pace(const FrameRecord& record, const std::function<bool()>& stopping) {
    if (p_.pace != "recorded") return;
    auto now = Clock::now();
    if (due_ == Clock::time_point{}) {
      due_ = now;
      firstHostNs_ = record.hostTimeNs;
    }
    auto when = due_ + std::chrono::nanoseconds(record.hostTimeNs - firstHostNs_);
    while (Clock::now() < when && !stopping())
      std::this_thread::sleep_for(std::min<Clock::duration>(when - Clock::now(), std::chrono::milliseconds(20)));
  }

  Params p_;
  std::unique_ptr<RecordingReader> reader_;
  std::optional<RecordLine> pending_;  // the frame read() returns next
  std::vector<PlaneRecord> planes_;
  uint64_t expected_ = 0;
  Clock::time_point due_{};
  int64_t firstHostNs_ = 0;
  std::atomic<uint64_t> replayed_{0};
  std::string damage_;  // found while reading ahead
};

}  // namespace

void registerReplaySource(Registry& registry) {
  registry.add<ReplaySource>(Role::source, "replay",
                             "a raw recording (record sink) played through the graph as the camera delivered it");
}

}  // namespace pp::gst
