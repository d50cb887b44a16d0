// Source `aravis`: one GigE Vision / USB3 Vision camera. The graph's buffers (pinned, mapped on a
// Jetson, rows packed as the camera sends them) are handed to Aravis, so the camera's frames land
// where the first stage reads them; a buffer goes back to the camera only when the graph recycles
// it after its last reader. A lost camera is reported and reopened with backoff. Two cameras are two
// sources; the graph pairs their frames (pipeline.pair_tolerance_ms).
#include <arv.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "pipeline/aravis/cameras.hpp"
#include "pipeline/aravis/frame_gaps.hpp"
#include "pipeline/aravis/software_trigger.hpp"
#include "pipeline/glib_owned.hpp"
#include "pipeline/registry.hpp"

namespace pp::aravis {

namespace {

struct AravisParams {
  std::string camera;
  std::string pixel_format;
  std::vector<int> region;
  double exposure_us = 0, gain = -1, frame_rate = 0;
  std::string trigger = "keep";
  double trigger_rate_hz = 0;
  std::string trigger_group;
  std::string trigger_activation;
  double trigger_delay_us = -1;
  TextMap features;
  int packet_size = 0;
  int socket_buffer_kb = 0;
  bool packet_resend = true;
  int packet_timeout_ms = 20;
  int frame_retention_ms = 100;
  bool realtime_thread = true;
  std::string incomplete = "drop";
  std::string on_disconnect = "reconnect";
  std::string mosaic = "auto";
  std::string bayer = "auto";
  std::vector<int> angles = {90, 45, 135, 0};
  int bit_depth = 0;
  double startup_wait_s = -1;
  bool ptp = false;
  std::string chunk_data = "keep";
};

// What a PFNC pixel format name says of its samples: <Type><bits>[p|Packed], e.g. Mono8,
// PolarizeMono12, BayerRG16, Mono12p. Camera-processed polarization formats (angles, Stokes,
// DoLP/AoLP; The Imaging Source's ADI and Quad formats, four values a pixel) are not raw mosaics.
struct FormatName {
  int bits = 0;  // significant bits; 0: no bit count at the end of the name
  bool packed = false;
  bool legacyPacked =
      false;  // GigE Vision 1 "Packed" (Mono12Packed): two pixels in three bytes, another order than PFNC's "p"
  bool processed = false;
  // Bits a pixel takes in the frame: 8, 16 (10 to 16-bit samples unpacked), or packed.
  int wireBits() const { return packed ? (legacyPacked ? 12 : bits) : bits <= 8 ? 8 : 16; }
  // The samples as demosaic's pixel_format names them (mono8, mono12, mono12p, mono10packed, ...).
  std::string sampleFormat() const {
    if (packed) return "mono" + std::to_string(bits) + (legacyPacked ? "packed" : "p");
    return bits <= 8 ? "mono8" : bits == 10 || bits == 12 ? "mono" + std::to_string(bits) : "mono16";
  }
};
FormatName readFormatName(const std::string& name) {
  FormatName f;
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"dolp", "aolp", "stokes", "angles", "s0", "s1", "s2", "polarizedadi", "polarizedquad"})
    if (lower.find(word) != std::string::npos) f.processed = true;
  std::string stem = name;
  if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, "Packed") == 0)
    f.packed = f.legacyPacked = true, stem.resize(stem.size() - 6);
  else if (!stem.empty() && stem.back() == 'p')
    f.packed = true, stem.pop_back();
  size_t digits = stem.find_last_not_of("0123456789") + 1;
  if (digits < stem.size()) f.bits = std::stoi(stem.substr(digits));
  return f;
}

// A camera that came back set up differently from the one the graph's buffers were made for.
struct CameraChanged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The Bayer phase a colour format names: BayerRG8, BayerRGPolarized8, PolarizedBayerBG8 ... ("" if none).
std::string bayerOf(const std::string& format) {
  auto at = format.find("Bayer");
  if (at == std::string::npos || at + 7 > format.size()) return "";
  std::string phase = format.substr(at + 5, 2);
  for (auto& c : phase) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (phase == "rg") return "rggb";
  if (phase == "bg") return "bggr";
  if (phase == "gr") return "grbg";
  if (phase == "gb") return "gbrg";
  return "";
}

std::string errorText(GError*& error) {
  std::string text = error ? error->message : "unknown error";
  g_clear_error(&error);
  return text;
}

// A camera's stream. Aravis 0.9 and later (aravis-0.10) also take a destroy function for the
// callback's data; ours outlives the stream.
ArvStream* createStream(ArvCamera* camera, ArvStreamCallback callback, void* data, GError** error) {
#if ARAVIS_CHECK_VERSION(0, 9, 0)
  return arv_camera_create_stream(camera, callback, data, nullptr, error);
#else
  return arv_camera_create_stream(camera, callback, data, error);
#endif
}

// The entries an enumeration feature offers now; none when the camera lacks it.
std::vector<std::string> enumerationEntries(ArvDevice* device, const char* feature) {
  if (!arv_device_get_feature(device, feature)) return {};
  guint n = 0;
  const char** entries = arv_device_dup_available_enumeration_feature_values_as_strings(device, feature, &n, nullptr);
  std::vector<std::string> names(entries, entries + (entries ? n : 0));
  g_free(entries);
  return names;
}

// The pixel formats a camera offers, by name.
std::vector<std::string> offeredFormats(ArvCamera* camera) {
  return enumerationEntries(arv_camera_get_device(camera), "PixelFormat");
}

class AravisSource : public Source, private TriggerTarget {
 public:
  using Params = AravisParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("camera", &Params::camera,
                 "which camera: Aravis id (Vendor-Serial), serial number, IP address or MAC; empty: the first found")
            .add("pixel_format", &Params::pixel_format,
                 "GenICam PixelFormat to set (Mono8, Mono12, Mono16, PolarizeMono8, ...); empty: keep the camera's")
            .add("region", &Params::region, "[offset_x, offset_y, width, height] to set; empty: keep",
                 Rule<std::vector<int>>{"empty or four integers >= 0",
                                        [](const std::vector<int>& r) {
                                          return r.empty() ||
                                                 (r.size() == 4 && r[0] >= 0 && r[1] >= 0 && r[2] > 0 && r[3] > 0);
                                        }})
            .add("exposure_us", &Params::exposure_us, "ExposureTime in microseconds; 0: keep", numberIn(0, 1e8))
            .add("gain", &Params::gain, "Gain; -1: keep", numberIn(-1, 1000))
            .add("frame_rate", &Params::frame_rate, "AcquisitionFrameRate; 0: keep", numberIn(0, 10000))
            .add("trigger", &Params::trigger,
                 "keep, off (free running), software (polarpipe fires it at trigger_rate_hz), or a TriggerSource such "
                 "as Line0")
            .add("trigger_rate_hz", &Params::trigger_rate_hz,
                 "trigger: software: triggers a second, paced by the clock (a trigger due while every buffer is in the "
                 "graph is skipped, counted); 0: frame_rate",
                 numberIn(0, 10000))
            .add("trigger_group", &Params::trigger_group,
                 "trigger: software: cameras with the same group name are fired together from one clock, one frame "
                 "each a tick (a stereo rig); empty: alone")
            .add("trigger_activation", &Params::trigger_activation,
                 "hardware trigger: TriggerActivation (RisingEdge, FallingEdge, ...); empty: keep")
            .add("trigger_delay_us", &Params::trigger_delay_us,
                 "hardware trigger: TriggerDelay in microseconds; -1: keep", numberIn(-1, 1e7))
            .add("features", &Params::features,
                 "any other GenICam features, set in order after the above: {Name: value}")
            .add("packet_size", &Params::packet_size,
                 "GigE packet size in bytes; 0: the largest the path carries (negotiated)", intIn(0, 16384))
            .add("socket_buffer_kb", &Params::socket_buffer_kb,
                 "GigE receive socket buffer; 0: sized by Aravis from the frame", intIn(0, 1 << 20))
            .add("packet_resend", &Params::packet_resend, "ask the camera to resend lost packets")
            .add("packet_timeout_ms", &Params::packet_timeout_ms,
                 "wait this long for a missing packet before asking again", intIn(1, 10000))
            .add("frame_retention_ms", &Params::frame_retention_ms, "give up on an incomplete frame after this long",
                 intIn(1, 100000))
            .add("realtime_thread", &Params::realtime_thread,
                 "run the receive thread at real-time (else high) priority when allowed")
            .add("incomplete", &Params::incomplete,
                 "frames with missing packets: drop (counted) or pass (flagged incomplete, missing data zero)",
                 oneOf({"drop", "pass"}))
            .add("on_disconnect", &Params::on_disconnect,
                 "when the camera is lost: reconnect (with backoff) or stop the pipeline", oneOf({"reconnect", "stop"}))
            .add("mosaic", &Params::mosaic,
                 "sensor layout put in each frame's metadata: auto (Bayer pixel formats: polar_rggb, else polar_mono)",
                 oneOf({"auto", "polar_mono", "polar_rggb"}))
            .add("bayer", &Params::bayer,
                 "polar_rggb: colour of each 2x2 polarizer block, put in each frame's metadata; auto: from the pixel "
                 "format (BayerRG.., PolarizedBayerBG.., ...)",
                 oneOf({"auto", "rggb", "bggr", "grbg", "gbrg"}))
            .add("angles", &Params::angles,
                 "polarizer angle at each pixel of the sensor's 2x2 blocks, row-major, put in each frame's metadata "
                 "(every IMX250MZR and MYR: 90, 45, 135, 0)",
                 permutationOf({0, 45, 90, 135}))
            .add("bit_depth", &Params::bit_depth, "significant bits; 0: from the pixel format", intIn(0, 16))
            .add("chunk_data", &Params::chunk_data,
                 "per-frame metadata the camera sends after each image (frame id, exposure, gain, ...): on (every "
                 "chunk it offers), off, or keep the camera's setting",
                 oneOf({"keep", "on", "off"}))
            .add("ptp", &Params::ptp,
                 "IEEE 1588 (PTP) on: PtpEnable, or GevIEEE1588 on older cameras; its state and offset in the metrics "
                 "(camera_ptp_*)")
            .add("startup_wait_s", &Params::startup_wait_s,
                 "at start, wait this long for a camera that is not there yet (a PoE camera booting), saying so every "
                 "5 s; -1: for ever, 0: fail at once",
                 numberIn(-1, 1e9));
    return schema;
  }

  AravisSource(const Params& p, ParamContext& ctx) : p_(p) {
    if (p.trigger == "software" && p.trigger_rate_hz <= 0 && p.frame_rate <= 0)
      ctx.error("trigger: software needs trigger_rate_hz (or frame_rate): polarpipe fires the triggers");
    else if (p.trigger == "software")
      try {
        trigger_ = SoftwareTrigger::join(p.trigger_group, p.trigger_rate_hz > 0 ? p.trigger_rate_hz : p.frame_rate);
      } catch (const std::invalid_argument& e) {
        ctx.error(e.what());
      }
    if (p.trigger != "software" && !p.trigger_group.empty())
      ctx.error("trigger_group is for trigger: software (cameras fired together by polarpipe)");
    if (p.trigger == "software" || p.trigger == "off" || p.trigger == "keep")
      if (!p.trigger_activation.empty() || p.trigger_delay_us >= 0)
        ctx.error("trigger_activation and trigger_delay_us are for a hardware trigger (trigger: Line0, ...)");
  }

  ~AravisSource() override { close(); }

  void setup(PortSetup& ports) override {
    try {
      switch (ports.devices()) {
        case PortSetup::Devices::none:
          if (!declareFromConfig(ports)) return;
          break;
        case PortSetup::Devices::readOnly:
          probe();
          if (!declareFromConfig(ports)) return;
          break;
        case PortSetup::Devices::use: openWhenThere(); break;
      }
    } catch (const std::exception& e) {
      ports.fail(e.what());
      return;
    }
    size_t rowBytes = this->rowBytes();
    if (rowBytes % 4)
      ports.fail("camera " + id_ + ": rows of " + std::to_string(rowBytes) +
                 " bytes; choose a Width whose rows are a multiple of 4 bytes (region)");
    // Packed frames stay packed: a u8 plane of their bytes, unpacked by demosaic (pixel_format: mono12p, ...).
    PortSpec spec = PortSpec::image({depth(), 1}, static_cast<int>(rowBytes / depthBytes(depth())), height_);
    spec.pitch = rowBytes;    // the camera writes its rows straight into the buffer
    spec.tail = chunkBytes_;  // and its chunk data after them
    ports.output("raw", spec);
  }

  bool live() const override { return true; }
  bool fillsOwnBuffers() const override { return true; }
  // Only PTP makes two cameras' timestamps comparable: a shared trigger fires them together, but
  // each clock still counts from its own start.
  bool sharesClock() const override { return p_.ptp; }

  void bindBuffers(const std::vector<BufferSetImages>& sets) override {
    std::lock_guard lock(mutex_);
    for (const auto& set : sets) images_.push_back(set.at("raw"));
    buffers_.assign(images_.size(), nullptr);
    inGraph_.assign(images_.size(), false);
    setFrameIds_.assign(images_.size(), 0);
    startStream();
  }

  void recycle(size_t set) override {
    std::lock_guard lock(mutex_);
    inGraph_[set] = false;
    if (stream_) arv_stream_push_buffer(stream_.get(), buffers_[set]);
  }

  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    while (!stopping()) {
      if (lost_) {
        if (p_.on_disconnect == "stop") throw std::runtime_error("camera " + id_ + " was lost (on_disconnect: stop)");
        reconnect(stopping);
        continue;
      }
      if (!acquiring_) {
        GError* error = nullptr;
        arv_camera_start_acquisition(camera_.get(), &error);
        if (error) throw std::runtime_error("camera " + id_ + ": cannot start acquisition: " + errorText(error));
        acquiring_ = true;
        if (trigger_) trigger_->begin(this);
      }
      ArvBuffer* buffer = arv_stream_timeout_pop_buffer(stream_.get(), 100000);
      updateStatistics();
      if (p_.ptp && Clock::now() - ptpCheckedAt_ >= std::chrono::seconds(1)) checkPtp();
      if (!buffer) continue;
      size_t set = GPOINTER_TO_SIZE(arv_buffer_get_user_data(buffer));
      ArvBufferStatus status = arv_buffer_get_status(buffer);
      countFrame(set, status, arv_buffer_get_frame_id(buffer));
      if (status != ARV_BUFFER_STATUS_SUCCESS) {
        ++incomplete_;
        if (status == ARV_BUFFER_STATUS_TIMEOUT) ++timeouts_;
        if (p_.incomplete == "drop" || arv_buffer_get_payload_type(buffer) == ARV_BUFFER_PAYLOAD_TYPE_UNKNOWN) {
          arv_stream_push_buffer(stream_.get(), buffer);
          continue;
        }
      }
      {
        std::lock_guard lock(mutex_);
        buffers_[set] = buffer;
        inGraph_[set] = true;
      }
      frame.useSet(set);
      FrameMeta& meta = frame.meta();
      meta.cameraTimestampNs = arv_buffer_get_timestamp(buffer);
      meta.cameraFrameId = arv_buffer_get_frame_id(buffer);
      meta.exposureUs = exposureUs_;
      meta.gain = gain_;
      meta.chunks.clear();
      if (status == ARV_BUFFER_STATUS_SUCCESS) readChunks(buffer, meta);
      meta.mosaic = mosaic_;
      meta.bayer = bayer_;
      meta.angles = p_.angles;
      meta.bitDepth = bitDepth_;
      meta.sampleFormat = sampleFormat_;
      meta.incomplete = status != ARV_BUFFER_STATUS_SUCCESS;
      ++completed_;
      return true;
    }
    return false;
  }

  std::vector<Counter> counters() const override {
    return {
        {"camera_frames", "Frames received complete from the camera.", &completed_},
        {"camera_incomplete", "Frames with missing packets (dropped or passed on flagged, per config).", &incomplete_},
        {"camera_missing_packets", "GigE packets that never arrived.", &missingPackets_},
        {"camera_resent_packets", "GigE packets the camera resent on request.", &resentPackets_},
        {"camera_timeouts", "Frames given up on after frame_retention_ms.", &timeouts_},
        {"camera_reconnects", "Times the camera was lost and opened again.", &reconnects_},
        {"camera_underruns", "Frames the stream had no free buffer for (the graph held them all).", &underruns_},
        {"camera_frame_gaps", "Frames the camera numbered that never arrived (gaps in the frame id).", &frameGaps_},
        {"camera_chunk_errors",
         "Frames whose chunk data could not be read (their metadata is the settings read at start).", &chunkErrors_},
        {"camera_ptp_locked", "1 while the camera's PTP clock follows a master (or is the master), else 0.",
         &ptpLocked_, true},
        {"camera_ptp_offset_ns", "The camera's PTP offset from its master, in ns (absolute value).", &ptpOffsetNs_,
         true},
        {"camera_triggers", "Software triggers sent to the camera.", &triggers_},
        {"camera_triggers_skipped",
         "Software trigger ticks not sent because every buffer was in the graph (here, or in another camera of its "
         "trigger_group).",
         &triggersSkipped_}};
  }

 private:
  // Under validate: the size and sample depth the config declares (pixel_format and region), without
  // the camera. False (and the node left unchecked) when the config leaves them to the camera.
  bool declareFromConfig(PortSetup& ports) {
    if (p_.pixel_format.empty() || p_.region.empty()) {
      ports.unchecked(
          "the frame's size and pixel format come from the camera (give pixel_format and region to check the graph "
          "against them, or validate --camera)");
      return false;
    }
    FormatName f = readFormatName(p_.pixel_format);
    if (f.bits == 0) {
      ports.unchecked("pixel_format '" + p_.pixel_format +
                      "' does not say its bits; the camera tells (validate --camera)");
      return false;
    }
    if (!takes(f)) throw std::runtime_error("pixel_format '" + p_.pixel_format + "': " + refusal(p_.pixel_format, f));
    width_ = p_.region[2];
    height_ = p_.region[3];
    useFormat(f);
    return true;
  }

  // The raw formats the graph takes: one sample of 8 or 16 bits (10, 12 and 14-bit unpacked samples
  // come in 16), or 10 and 12 bits packed, PFNC's way (Mono12p: a bit stream, lowest bits first) or
  // GigE Vision's older one (Mono12Packed), which demosaic unpacks as it reads.
  static bool takes(const FormatName& f) {
    if (f.processed) return false;
    if (f.packed) return f.bits == 10 || f.bits == 12;
    return f.bits >= 8 && f.bits <= 16 && f.bits % 2 == 0;
  }

  void useFormat(const FormatName& f) {
    wireBits_ = f.wireBits();
    sampleFormat_ = f.sampleFormat();
  }
  // The plane's samples: 16-bit words, or bytes (packed frames: a u8 plane of the camera's bytes).
  Depth depth() const { return wireBits_ == 16 ? Depth::u16 : Depth::u8; }

  // What the graph's buffers are made for: size, samples, chunk data.
  using Shape = std::tuple<int, int, int, std::string, size_t>;
  Shape shape() const { return {width_, height_, wireBits_, sampleFormat_, chunkBytes_}; }
  std::string shapeText() const {
    return std::to_string(width_) + "x" + std::to_string(height_) + " " + sampleFormat_ +
           (chunkBytes_ ? " + " + std::to_string(chunkBytes_) + " bytes of chunk data" : "");
  }
  void restoreShape(const Shape& built) { std::tie(width_, height_, wireBits_, sampleFormat_, chunkBytes_) = built; }

  size_t rowBytes() const { return static_cast<size_t>(width_) * static_cast<size_t>(wireBits_) / 8; }

  // Why a format is not taken, and what to choose instead.
  static std::string refusal(const std::string& name, const FormatName& f) {
    if (f.processed)
      return name +
             " is processed in the camera (angles, Stokes, DoLP or AoLP), not a raw mosaic; choose the raw format "
             "(Mono8, Mono12, Mono16, PolarizeMono8, PolarizedMono12p, BayerRG8, BayerRG12, ...)";
    std::string stem = name.substr(0, name.find_last_of("0123456789") + 1);
    if (f.packed)
      return name + " is a " + std::to_string(f.bits) + "-bit packing polarpipe does not unpack; choose " + stem +
             " (unpacked) or a 10 or 12-bit packed format";
    return name + " has " + std::to_string(f.bits) +
           " bits a pixel; polarpipe takes one raw sample of 8 to 16 bits, or 10 and 12 bits packed (Mono12p, "
           "Mono12Packed, ...)";
  }

  // validate --camera: the camera opened and read, nothing set. The pixel format must be one it
  // offers, the region must fit its sensor, every feature must exist.
  void probe() {
    id_ = resolveCamera(p_.camera);
    GError* error = nullptr;
    ArvCamera* camera = arv_camera_new(id_.c_str(), &error);
    if (!camera) throw std::runtime_error("cannot open camera " + id_ + ": " + errorText(error));
    glib::Owned<ArvCamera> owned(camera);
    if (!p_.pixel_format.empty()) {
      std::vector<std::string> formats = offeredFormats(camera);
      if (std::find(formats.begin(), formats.end(), p_.pixel_format) == formats.end())
        throw std::runtime_error("camera " + id_ + " does not offer PixelFormat '" + p_.pixel_format +
                                 "' (it offers: " + joinList(formats) + ")");
    }
    if (!p_.region.empty()) {
      gint sensorWidth = 0, sensorHeight = 0;
      arv_camera_get_sensor_size(camera, &sensorWidth, &sensorHeight, &error);
      if (error) throw std::runtime_error("camera " + id_ + ": cannot read the sensor size: " + errorText(error));
      if (p_.region[0] + p_.region[2] > sensorWidth || p_.region[1] + p_.region[3] > sensorHeight)
        throw std::runtime_error("camera " + id_ + ": region " + toText(p_.region) + " does not fit its " +
                                 std::to_string(sensorWidth) + "x" + std::to_string(sensorHeight) + " sensor");
    }
    ArvDevice* device = arv_camera_get_device(camera);
    for (const auto& [name, value] : p_.features)
      if (!arv_device_get_feature(device, name.c_str()))
        throw std::runtime_error("camera " + id_ + " has no feature '" + name + "'");
    if (p_.chunk_data == "on" && !arv_device_get_feature(device, "ChunkModeActive"))
      throw std::runtime_error(noChunkData());
  }

  std::string noChunkData() const {
    return "camera " + id_ + " has no chunk data (no ChunkModeActive feature): set chunk_data: keep";
  }

  // run: a camera that is not there yet (a PoE camera boots after the Jetson) is waited for,
  // startup_wait_s (-1: for ever), with a line every 5 s; anything else it says is an error at once.
  void openWhenThere() {
    auto started = Clock::now();
    std::optional<Clock::time_point> said;  // the last "waiting" line
    for (;;) {
      try {
        open();
        if (said)
          spdlog::info("camera {} is there after {:.1f} s", id_,
                       std::chrono::duration<double>(Clock::now() - started).count());
        return;
      } catch (const CameraNotFound& e) {
        double waited = std::chrono::duration<double>(Clock::now() - started).count();
        if (p_.startup_wait_s >= 0 && waited >= p_.startup_wait_s)
          throw std::runtime_error(
              std::string(e.what()) +
              (p_.startup_wait_s > 0 ? " (waited " + toText(p_.startup_wait_s) + " s: startup_wait_s)" : ""));
        if (!said || Clock::now() - *said >= std::chrono::seconds(5)) {
          spdlog::warn("{}; waiting for it ({:.0f} s so far{})", e.what(), waited,
                       p_.startup_wait_s < 0 ? ", for ever: startup_wait_s" : "");
          said = Clock::now();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  }

  // Opens and configures the camera; every rejected setting names the feature and the camera.
  void open() {
    id_ = resolveCamera(p_.camera);
    GError* error = nullptr;
    camera_.reset(arv_camera_new(id_.c_str(), &error));
    if (!camera_) throw std::runtime_error("cannot open camera " + id_ + ": " + errorText(error));
    auto check = [&](const std::string& what) {
      if (error) throw std::runtime_error("camera " + id_ + ": " + what + ": " + errorText(error));
    };
    if (!p_.pixel_format.empty()) {
      arv_camera_set_pixel_format_from_string(camera_.get(), p_.pixel_format.c_str(), &error);
      if (error) {
        std::string why = errorText(error);
        throw std::runtime_error("camera " + id_ + ": PixelFormat '" + p_.pixel_format + "' rejected: " + why +
                                 " (it offers: " + joinList(offeredFormats(camera_.get())) + ")");
      }
    }
    if (!p_.region.empty()) {
      arv_camera_set_region(camera_.get(), p_.region[0], p_.region[1], p_.region[2], p_.region[3], &error);
      check("region " + toText(p_.region) + " rejected");
    }
    if (p_.exposure_us > 0) {
      arv_camera_set_exposure_time(camera_.get(), p_.exposure_us, &error);
      check("ExposureTime " + toText(p_.exposure_us) + " rejected");
    }
    if (p_.gain >= 0) {
      arv_camera_set_gain(camera_.get(), p_.gain, &error);
      check("Gain " + toText(p_.gain) + " rejected");
    }
    ArvDevice* device = arv_camera_get_device(camera_.get());
    if (p_.frame_rate > 0) {
      // Through the features: arv_camera_set_frame_rate also turns every trigger off.
      if (arv_device_get_feature(device, "AcquisitionFrameRateEnable")) {
        arv_device_set_boolean_feature_value(device, "AcquisitionFrameRateEnable", TRUE, &error);
        check("AcquisitionFrameRateEnable rejected");
      }
      arv_device_set_float_feature_value(device, frameRateFeature(device), p_.frame_rate, &error);
      check(std::string(frameRateFeature(device)) + " " + toText(p_.frame_rate) + " rejected");
    }
    if (p_.trigger == "off") {
      arv_camera_clear_triggers(camera_.get(), &error);
      check("TriggerMode Off rejected");
    } else if (p_.trigger == "software") {
      arv_camera_set_trigger(camera_.get(), "Software", &error);
      check("software trigger rejected");
    } else if (p_.trigger != "keep") {
      arv_camera_set_trigger(camera_.get(), p_.trigger.c_str(), &error);
      check("TriggerSource '" + p_.trigger + "' rejected");
      if (!p_.trigger_activation.empty()) {
        arv_device_set_string_feature_value(device, "TriggerActivation", p_.trigger_activation.c_str(), &error);
        check("TriggerActivation '" + p_.trigger_activation + "' rejected");
      }
      if (p_.trigger_delay_us >= 0) {
        const char* delay = arv_device_get_feature(device, "TriggerDelay") ? "TriggerDelay" : "TriggerDelayAbs";
        arv_device_set_float_feature_value(device, delay, p_.trigger_delay_us, &error);
        check(std::string(delay) + " " + toText(p_.trigger_delay_us) + " rejected");
      }
    }
    for (const auto& [name, value] : p_.features) {
      if (!arv_device_get_feature(device, name.c_str()))
        throw std::runtime_error("camera " + id_ + " has no feature '" + name + "'");
      arv_device_set_features_from_string(device, (name + "=" + value).c_str(), &error);
      check("feature " + name + " = '" + value + "' rejected");
    }
    setChunkMode(device);
    if (p_.ptp) {
      const char* enable = arv_device_get_feature(device, "PtpEnable")     ? "PtpEnable"
                           : arv_device_get_feature(device, "GevIEEE1588") ? "GevIEEE1588"
                                                                           : nullptr;
      if (!enable)
        throw std::runtime_error(
            "camera " + id_ + " has neither PtpEnable nor GevIEEE1588: it cannot take part in IEEE 1588 (ptp: true)");
      arv_device_set_boolean_feature_value(device, enable, TRUE, &error);
      check(std::string(enable) + " rejected");
    }
    if (arv_camera_is_gv_device(camera_.get())) {
      if (p_.packet_size > 0)
        arv_camera_gv_set_packet_size(camera_.get(), p_.packet_size, &error);
      else
        arv_camera_gv_auto_packet_size(camera_.get(), &error);
      check("packet size");
    }

    int x = 0, y = 0;
    arv_camera_get_region(camera_.get(), &x, &y, &width_, &height_, &error);
    check("cannot read the region");
    if (width_ <= 0 || height_ <= 0)
      throw std::runtime_error("camera " + id_ + " reports a " + std::to_string(width_) + "x" +
                               std::to_string(height_) + " region");
    ArvPixelFormat format = arv_camera_get_pixel_format(camera_.get(), &error);
    check("cannot read the pixel format");
    const char* formatName = arv_camera_get_pixel_format_as_string(camera_.get(), nullptr);
    std::string name = formatName ? formatName : "?";
    int bits = ARV_PIXEL_FORMAT_BIT_PER_PIXEL(format);
    FormatName named = readFormatName(name);
    if (named.bits == 0) named.bits = bits;  // a vendor's name without its bits
    if (!takes(named))
      throw std::runtime_error("camera " + id_ + ": PixelFormat " + name + ": " + refusal(name, named));
    if (named.wireBits() != bits)
      throw std::runtime_error("camera " + id_ + ": PixelFormat " + name + " takes " + std::to_string(bits) +
                               " bits a pixel, not the " + std::to_string(named.wireBits()) +
                               " its name says; set pixel_format to a PFNC name (Mono12p, Mono12, ...)");
    useFormat(named);
    size_t payload = arv_camera_get_payload(camera_.get(), &error);
    check("cannot read the payload size");
    size_t frameBytes = rowBytes() * static_cast<size_t>(height_);
    bool chunks =
        arv_device_get_feature(device, "ChunkModeActive") && arv_camera_get_chunk_mode(camera_.get(), nullptr);
    if (chunks ? payload < frameBytes : payload != frameBytes)
      throw std::runtime_error("camera " + id_ + ": payload of " + std::to_string(payload) + " bytes is not one " +
                               std::to_string(width_) + "x" + std::to_string(height_) + " image (" +
                               std::to_string(frameBytes) + " bytes)" + (chunks ? "" : " and chunk data is off"));
    chunkBytes_ = payload - frameBytes;
    findChunks(device, chunks);
    mosaic_ = p_.mosaic != "auto" ? p_.mosaic : name.find("Bayer") != std::string::npos ? "polar_rggb" : "polar_mono";
    bayer_ = mosaic_ != "polar_rggb" ? "" : p_.bayer != "auto" ? p_.bayer : bayerOf(name);
    bitDepth_ = p_.bit_depth ? p_.bit_depth : named.bits;
    checkLayout(device, x, y);
    exposureUs_ = arv_camera_get_exposure_time(camera_.get(), nullptr);
    gain_ = arv_camera_get_gain(camera_.get(), nullptr);
    for (auto [automatic, value, chunk] :
         {std::tuple{"ExposureAuto", &exposureUs_, "ChunkExposureTime"}, std::tuple{"GainAuto", &gain_, "ChunkGain"}}) {
      const char* mode = arv_device_get_feature(device, automatic)
                             ? arv_device_get_string_feature_value(device, automatic, nullptr)
                             : nullptr;
      if (!mode || std::string(mode) == "Off") continue;
      *value = 0;                     // changes from frame to frame: unknown unless the frame's own chunk says
      const char* chunkName = chunk;  // a structured binding cannot be captured before C++20 (clang refuses)
      if (std::any_of(chunkFeatures_.begin(), chunkFeatures_.end(),
                      [&](const ChunkFeature& f) { return f.name == chunkName; }))
        continue;
      spdlog::warn(
          "camera {}: {} is {}, so each frame's value is unknown (0 in its metadata) unless the camera sends it as "
          "chunk data (chunk_data: on)",
          id_, automatic, mode);
    }
    lostHandler_ = g_signal_connect(
        device, "control-lost",
        G_CALLBACK(+[](ArvDevice*, gpointer self) { static_cast<AravisSource*>(self)->lost_ = true; }), this);
    double rate = arv_device_get_float_feature_value(device, frameRateFeature(device), nullptr);
    const char* triggerMode = arv_device_get_string_feature_value(device, "TriggerMode", nullptr);
    const char* triggerSource = arv_device_get_string_feature_value(device, "TriggerSource", nullptr);
    bool triggeredOn = triggerMode && std::string(triggerMode) == "On";
    std::string triggered =
        triggeredOn ? std::string("triggered by ") + (triggerSource ? triggerSource : "?") : "free running";
    spdlog::info("camera {}: {} {}x{}, {}{} ({}-bit), exposure {} us, gain {}, {} at {:.3g} frames/s", id_, name,
                 width_, height_, mosaic_, bayer_.empty() ? "" : " " + bayer_, bitDepth_, exposureUs_, gain_, triggered,
                 rate);
    if (p_.frame_rate > 0 && std::abs(rate - p_.frame_rate) > 0.01 * p_.frame_rate)
      spdlog::warn(
          "camera {}: frame_rate {} asked, the camera runs at {:.4g} frames/s (its limit at this exposure and size)",
          id_, p_.frame_rate, rate);
  }

  // The polarizer pattern repeats every 2 pixels (mono) or 4 (colour: 2x2 angles on each Bayer
  // colour): a region offset off that period, a mirrored readout, binning or decimation changes
  // which angle lands where, or mixes them. Refused, with what to change.
  void checkLayout(ArvDevice* device, int offsetX, int offsetY) {
    int period = mosaic_ == "polar_rggb" ? 4 : 2;
    if (offsetX % period || offsetY % period)
      throw std::runtime_error(
          "camera " + id_ + ": region offset (" + std::to_string(offsetX) + ", " + std::to_string(offsetY) +
          ") is not a multiple of " + std::to_string(period) + ", the " + mosaic_ +
          " pattern's period: the angles would be read in the wrong places (choose OffsetX and OffsetY in steps of " +
          std::to_string(period) + ")");
    // 16-bit samples are read little-endian; a camera that sends them big-endian is switched over.
    if (depth() == Depth::u16 && arv_device_get_feature(device, "GevSCPSBigEndian") &&
        arv_device_get_boolean_feature_value(device, "GevSCPSBigEndian", nullptr)) {
      GError* error = nullptr;
      arv_device_set_boolean_feature_value(device, "GevSCPSBigEndian", FALSE, &error);
      if (error)
        throw std::runtime_error(
            "camera " + id_ +
            " sends 16-bit samples big-endian and will not switch (GevSCPSBigEndian: " + errorText(error) + ")");
    }
    for (const char* mirror : {"ReverseX", "ReverseY"})
      if (arv_device_get_feature(device, mirror) && arv_device_get_boolean_feature_value(device, mirror, nullptr))
        throw std::runtime_error("camera " + id_ + ": " + mirror +
                                 " is on: a mirrored readout swaps the polarizer angles (set " + mirror + " false)");
    for (const char* mixing : {"BinningHorizontal", "BinningVertical", "DecimationHorizontal", "DecimationVertical"})
      if (arv_device_get_feature(device, mixing)) {
        gint64 factor = arv_device_get_integer_feature_value(device, mixing, nullptr);
        if (factor > 1)
          throw std::runtime_error("camera " + id_ + ": " + mixing + " is " + std::to_string(factor) +
                                   ": binning and decimation mix or skip polarizer pixels (set it to 1; demosaic to "
                                   "half resolution instead)");
      }
  }

  // The PTP clock's state, latched (PtpDataSetLatch) where the camera needs it, into the gauges;
  // a change is logged. Names: SFNC's Ptp*, or GigE Vision 1.2's GevIEEE1588*.
  void checkPtp() {
    ptpCheckedAt_ = Clock::now();
    ArvDevice* device = arv_camera_get_device(camera_.get());
    if (arv_device_get_feature(device, "PtpDataSetLatch"))
      arv_device_execute_command(device, "PtpDataSetLatch", nullptr);
    const char* statusFeature = arv_device_get_feature(device, "PtpStatus") ? "PtpStatus" : "GevIEEE1588Status";
    const char* status = arv_device_get_feature(device, statusFeature)
                             ? arv_device_get_string_feature_value(device, statusFeature, nullptr)
                             : nullptr;
    std::string state = status ? status : "unknown";
    bool locked = state == "Slave" || state == "Master";
    if (arv_device_get_feature(device, "PtpOffsetFromMaster")) {
      gint64 offset = arv_device_get_integer_feature_value(device, "PtpOffsetFromMaster", nullptr);
      ptpOffsetNs_ = static_cast<uint64_t>(offset < 0 ? -offset : offset);
    }
    if (locked != (ptpLocked_ == 1) || state != ptpState_)
      spdlog::log(locked ? spdlog::level::info : spdlog::level::warn, "camera {}: PTP {} (offset {} ns){}", id_, state,
                  ptpOffsetNs_.load(), locked ? "" : ": its timestamps do not follow the other cameras' yet");
    ptpLocked_ = locked ? 1 : 0;
    ptpState_ = state;
  }

  // chunk_data: on switches chunk mode on with every chunk the camera offers; off switches it off.
  void setChunkMode(ArvDevice* device) {
    if (p_.chunk_data == "keep") return;
    if (!arv_device_get_feature(device, "ChunkModeActive")) {
      if (p_.chunk_data == "on") throw std::runtime_error(noChunkData());
      return;
    }
    GError* error = nullptr;
    arv_camera_set_chunk_mode(camera_.get(), p_.chunk_data == "on", &error);
    if (error)
      throw std::runtime_error("camera " + id_ + ": ChunkModeActive " + (p_.chunk_data == "on" ? "true" : "false") +
                               " rejected: " + errorText(error));
    if (p_.chunk_data == "off") return;
    for (const std::string& chunk : enumerationEntries(device, "ChunkSelector")) {
      arv_camera_set_chunk_state(camera_.get(), chunk.c_str(), TRUE, &error);
      if (error) spdlog::warn("camera {}: chunk {} cannot be switched on: {}", id_, chunk, errorText(error));
    }
  }

  // With chunk mode on: the values to read from each frame, Chunk<Selector> for every chunk switched
  // on that is a number (the image itself and checksums are not features).
  void findChunks(ArvDevice* device, bool active) {
    chunkFeatures_.clear();
    chunkParser_.reset();
    if (!active) return;
    std::vector<std::string> names;
    for (const std::string& chunk : enumerationEntries(device, "ChunkSelector")) {
      ChunkFeature feature{"Chunk" + chunk};
      ArvGcNode* node = arv_device_get_feature(device, feature.name.c_str());
      if (!node || !arv_camera_get_chunk_state(camera_.get(), chunk.c_str(), nullptr)) continue;
      if (ARV_IS_GC_FLOAT(node))
        feature.kind = ChunkFeature::real;
      else if (ARV_IS_GC_INTEGER(node))
        feature.kind = ChunkFeature::integer;
      else if (ARV_IS_GC_BOOLEAN(node))
        feature.kind = ChunkFeature::boolean;
      else
        continue;
      chunkFeatures_.push_back(feature);
      names.push_back(feature.name);
    }
    chunkParser_.reset(arv_camera_create_chunk_parser(camera_.get()));
    spdlog::info("camera {}: chunk data on, {} bytes a frame; read from each: {}", id_, chunkBytes_,
                 names.empty() ? "nothing" : joinList(names));
  }

  // The frame's own metadata from its chunks: exposure, gain and frame id in their fields, the rest
  // by name. A frame without them keeps the values read at start, counted.
  void readChunks(ArvBuffer* buffer, FrameMeta& meta) {
    if (chunkFeatures_.empty()) return;
    GError* error = nullptr;
    if (!arv_buffer_has_chunks(buffer)) {
      g_set_error_literal(&error, ARV_CHUNK_PARSER_ERROR, ARV_CHUNK_PARSER_ERROR_BUFFER_NOT_FOUND,
                          "the frame came without chunk data");
    }
    for (size_t i = 0; i < chunkFeatures_.size() && !error; ++i) {
      const ChunkFeature& f = chunkFeatures_[i];
      const char* name = f.name.c_str();
      if (f.name == "ChunkFrameID") {
        meta.cameraFrameId =
            static_cast<uint64_t>(arv_chunk_parser_get_integer_value(chunkParser_.get(), buffer, name, &error));
        continue;
      }
      double value =
          f.kind == ChunkFeature::real ? arv_chunk_parser_get_float_value(chunkParser_.get(), buffer, name, &error)
          : f.kind == ChunkFeature::integer
              ? static_cast<double>(arv_chunk_parser_get_integer_value(chunkParser_.get(), buffer, name, &error))
              : arv_chunk_parser_get_boolean_value(chunkParser_.get(), buffer, name, &error);
      if (f.name == "ChunkExposureTime")
        meta.exposureUs = value;
      else if (f.name == "ChunkGain")
        meta.gain = value;
      else
        meta.chunks[f.name] = value;
    }
    if (!error) return;
    if (!chunkErrors_++)
      spdlog::warn(
          "camera {}: cannot read a frame's chunk data ({}); such frames get the settings read at start, 0 where they "
          "are automatic (counted: camera_chunk_errors)",
          id_, errorText(error));
    g_clear_error(&error);
    meta.exposureUs = exposureUs_;
    meta.gain = gain_;
    meta.chunks.clear();
  }

  static const char* frameRateFeature(ArvDevice* device) {
    return arv_device_get_feature(device, "AcquisitionFrameRate") ? "AcquisitionFrameRate" : "AcquisitionFrameRateAbs";
  }

  // trigger: software, asked by the group's clock (with its lock held).
  bool bufferFree() override {
    std::lock_guard lock(mutex_);
    return std::find(inGraph_.begin(), inGraph_.end(), false) != inGraph_.end();
  }
  void fire() override {
    GError* error = nullptr;
    arv_camera_software_trigger(camera_.get(), &error);
    if (error)
      spdlog::warn("camera {}: software trigger failed: {}", id_, errorText(error));
    else
      ++triggers_;
  }
  void skip() override { ++triggersSkipped_; }

  // Caller holds mutex_. A new stream gets every buffer the graph is not holding.
  void startStream() {
    GError* error = nullptr;
    stream_.reset(createStream(
        camera_.get(),
        +[](void* self, ArvStreamCallbackType type, ArvBuffer*) {
          if (type == ARV_STREAM_CALLBACK_TYPE_INIT && static_cast<AravisSource*>(self)->p_.realtime_thread &&
              !arv_make_thread_realtime(10))
            arv_make_thread_high_priority(-10);
        },
        this, &error));
    if (!stream_) throw std::runtime_error("camera " + id_ + ": cannot open the stream: " + errorText(error));
    if (ARV_IS_GV_STREAM(stream_.get())) {
      g_object_set(stream_.get(), "packet-resend",
                   p_.packet_resend ? ARV_GV_STREAM_PACKET_RESEND_ALWAYS : ARV_GV_STREAM_PACKET_RESEND_NEVER,
                   "packet-timeout", static_cast<unsigned>(p_.packet_timeout_ms * 1000), "frame-retention",
                   static_cast<unsigned>(p_.frame_retention_ms * 1000), nullptr);
      if (p_.socket_buffer_kb > 0)
        g_object_set(stream_.get(), "socket-buffer", ARV_GV_STREAM_SOCKET_BUFFER_FIXED, "socket-buffer-size",
                     p_.socket_buffer_kb * 1024, nullptr);
    }
    for (size_t i = 0; i < images_.size(); ++i) {
      if (inGraph_[i]) continue;
      buffers_[i] = arv_buffer_new_full(images_[i]->capacity(), images_[i]->data(), GSIZE_TO_POINTER(i), nullptr);
      setFrameIds_[i] = 0;
      arv_stream_push_buffer(stream_.get(), buffers_[i]);
    }
    statisticsBase_ = {missingPackets_.load(), resentPackets_.load(), underruns_.load()};
    gaps_.restart();
  }

  // Frames the camera numbered but that never arrived (lost whole, or no buffer was free; see
  // FrameGaps). A frame that lost its leader leaves its buffer's frame id as it was: that id is
  // taken as the frame's only where the buffer came back complete or with an id it did not hold.
  void countFrame(size_t set, ArvBufferStatus status, guint64 id) {
    gaps_.arrived(id, status == ARV_BUFFER_STATUS_SUCCESS || id != setFrameIds_[set]);
    setFrameIds_[set] = id;
    frameGaps_ = gaps_.gaps();
  }

  void updateStatistics() {
    if (!stream_) return;
    guint64 completed = 0, failures = 0, underruns = 0;
    arv_stream_get_statistics(stream_.get(), &completed, &failures, &underruns);
    underruns_ = statisticsBase_[2] + underruns;
    if (!ARV_IS_GV_STREAM(stream_.get())) return;
    guint64 resent = 0, missing = 0;
    arv_gv_stream_get_statistics(ARV_GV_STREAM(stream_.get()), &resent, &missing);
    missingPackets_ = statisticsBase_[0] + missing;
    resentPackets_ = statisticsBase_[1] + resent;
  }

  void close() {
    if (trigger_) trigger_->end(this);
    std::lock_guard lock(mutex_);
    if (camera_ && acquiring_) arv_camera_stop_acquisition(camera_.get(), nullptr);
    acquiring_ = false;
    stream_.reset();  // frees the buffers queued in it
    chunkParser_.reset();
    if (camera_) {
      if (lostHandler_) g_signal_handler_disconnect(arv_camera_get_device(camera_.get()), lostHandler_);
      lostHandler_ = 0;
      camera_.reset();
    }
  }

  void reconnect(const std::function<bool()>& stopping) {
    spdlog::warn("camera {} lost: reconnecting", id_);
    close();
    auto lostAt = Clock::now();
    auto wait = std::chrono::milliseconds(250);
    while (!stopping()) {
      auto built = shape();  // what the graph's buffers were made for; open() reads the camera's anew
      try {
        open();
        if (shape() != built) {
          std::string came = shapeText();
          restoreShape(built);
          throw CameraChanged(
              "camera " + id_ + " came back with " + came + " frames, but the graph was built for " + shapeText() +
              " (set region and pixel_format in the config, so that a camera that comes back is set up the same)");
        }
        {
          std::lock_guard lock(mutex_);
          startStream();
        }
        lost_ = false;
        ++reconnects_;
        spdlog::info("camera {} back after {:.1f} s", id_,
                     std::chrono::duration<double>(Clock::now() - lostAt).count());
        return;
      } catch (const CameraChanged&) {
        close();
        throw;
      } catch (const std::exception& e) {
        spdlog::debug("camera {} not back yet: {}", id_, e.what());
        close();
        restoreShape(built);
      }
      auto until = Clock::now() + wait;
      while (Clock::now() < until && !stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      wait = std::min(wait * 2, std::chrono::milliseconds(4000));
    }
  }

  Params p_;
  std::string id_;
  glib::Owned<ArvCamera> camera_;
  glib::Owned<ArvStream> stream_;
  gulong lostHandler_ = 0;
  std::atomic<bool> lost_{false};
  bool acquiring_ = false;
  int width_ = 0, height_ = 0;
  int wireBits_ = 8;          // bits a pixel takes in the frame (packed: 10 or 12)
  std::string sampleFormat_;  // demosaic's name for the samples: mono8, mono12p, ...
  std::string mosaic_, bayer_;
  int bitDepth_ = 8;
  double exposureUs_ = 0, gain_ = 0;

  std::mutex mutex_;                          // buffers and the stream, shared with recycle()
  std::vector<Image*> images_;                // per buffer set: the graph's image the camera fills
  std::vector<ArvBuffer*> buffers_;           // per buffer set: its Aravis buffer
  std::vector<bool> inGraph_;                 // per buffer set: held by the graph
  std::array<uint64_t, 3> statisticsBase_{};  // counts of earlier streams (before a reconnect)
  std::vector<guint64> setFrameIds_;          // per buffer set: its buffer's frame id when last read
  FrameGaps gaps_;
  std::atomic<uint64_t> completed_{0}, incomplete_{0}, missingPackets_{0}, resentPackets_{0}, timeouts_{0},
      reconnects_{0}, triggers_{0}, triggersSkipped_{0}, underruns_{0}, frameGaps_{0}, ptpLocked_{0}, ptpOffsetNs_{0};
  struct ChunkFeature {
    std::string name;  // ChunkExposureTime, ...
    enum Kind { real, integer, boolean } kind = real;
  };
  size_t chunkBytes_ = 0;  // bytes of chunk data after each image
  std::vector<ChunkFeature> chunkFeatures_;
  glib::Owned<ArvChunkParser> chunkParser_;
  std::atomic<uint64_t> chunkErrors_{0};
  std::string ptpState_;
  Clock::time_point ptpCheckedAt_{};
  std::shared_ptr<SoftwareTrigger> trigger_;  // trigger: software
};

}  // namespace

void registerAravisSource(Registry& registry) {
  registry.add<AravisSource>(
      Role::source, "aravis",
      "a GigE Vision / USB3 Vision camera through Aravis, zero copy into the graph's buffers (output raw)");
}

}  // namespace pp::aravis
