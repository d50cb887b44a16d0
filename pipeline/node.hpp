// The node contract. A node declares its ports once, in setup(), while the graph is built: inputs
// by name (their specs are known then, upstream is set up first) and outputs with format and size.
// Stages then do one frame's work in process(), enqueued on the stream they are given; sources
// fill frames; sinks consume finished frames on the host.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/image.hpp"

namespace pp {

enum class Backend { cpu, cuda };
inline const char* backendName(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

enum class PortKind { image, detections };

struct PortSpec {
  PortKind kind = PortKind::image;
  Format format{};
  int width = 0, height = 0;
  size_t pitch = 0;  // 0: rows aligned to 256 bytes; a camera filling buffers by DMA asks for packed rows
  size_t tail = 0;   // bytes allocated after the last row, for what a camera sends after the image (chunk data)
  // How the producer gives other formats, said where an input refuses this one ("": it cannot).
  std::string otherFormats;
  std::string text() const;  // "u8x1 2448x2048" or "detections"
  static PortSpec image(Format f, int w, int h) {
    PortSpec s;
    s.format = f, s.width = w, s.height = h;
    return s;
  }
  static PortSpec detections() {
    PortSpec s;
    s.kind = PortKind::detections;
    return s;
  }
};

struct Box {
  float x = 0, y = 0, w = 0, h = 0;
  int neighbors = 0;
  float depth = 0;  // 0: unknown
};
using Detections = std::vector<Box>;

using Clock = std::chrono::steady_clock;

struct FrameMeta {
  std::string source;
  uint64_t sequence = 0;  // per source, from 0
  uint64_t cameraTimestampNs = 0;
  Clock::time_point received{};     // host time the frame arrived
  uint64_t cameraFrameId = 0;       // the camera's own number for the frame (block id, or its FrameID chunk); 0: none
  double exposureUs = 0, gain = 0;  // per frame from chunk data where the camera sends it; 0 exposure: unknown
  std::map<std::string, double> chunks;  // the camera's other chunk values, by feature name (ChunkLineStatusAll, ...)
  std::string mosaic;                    // sensor layout of raw planes: "polar_mono", "polar_rggb", "" when not raw
  std::string bayer;  // colour sensors: colour of each 2x2 block ("rggb", "bggr", "grbg", "gbrg"); "" when not known
  std::vector<int>
      angles;        // raw planes: polarizer angle at each pixel of the 2x2 block, row-major; empty when not known
  int bitDepth = 0;  // significant bits of raw planes; 0: not raw
  std::string sampleFormat;  // raw planes: how samples lie, as demosaic's pixel_format names it (mono8, mono12p, ...);
                             // "" when not known
  bool incomplete = false;
  uint64_t droppedBefore = 0;  // frames a live source dropped just before this one
};

// A count a source or sink keeps of its own (packets resent, frames dropped at the encoder), shown
// in the metrics table and at /metrics. Other threads read it while the graph runs.
struct Counter {
  std::string name;  // snake_case: "encoder_dropped"
  std::string help;
  const std::atomic<uint64_t>* value;
  bool gauge = false;  // a level that goes up and down (a clock's state), not a running count
};

class PortSetup {
 public:
  virtual ~PortSetup() = default;
  virtual Backend backend() const = 0;
  // The spec of a connected input, or nullptr (a required one then reports an error).
  virtual const PortSpec* input(const std::string& name, bool required = true) = 0;
  // Inputs of any name (sinks that write whatever they are given).
  virtual std::vector<std::string> connectedInputs() const = 0;
  // Reports an error unless the connected input has one of `allowed` image formats.
  virtual const PortSpec* imageInput(const std::string& name, const std::vector<Format>& allowed,
                                     bool required = true) = 0;
  virtual void output(const std::string& name, const PortSpec& spec) = 0;
  // A configuration error about this node; the graph is not built.
  virtual void fail(const std::string& message) = 0;
  virtual std::string upstreamName(const std::string& input) const = 0;  // "cam.image"
  // How much of the world the node may touch while it is set up: under `validate` a camera is not
  // opened (unless --camera, and then only read), so `validate` passes before the camera is up.
  enum class Devices { use, readOnly, none };
  virtual Devices devices() const = 0;
  // What could not be checked without the device (a camera's size): no error, but this node and
  // those reading from it are left unchecked, and the report says so.
  virtual void unchecked(const std::string& why) = 0;
};

class ProcessContext {
 public:
  virtual ~ProcessContext() = default;
  virtual StreamHandle stream() const = 0;
  virtual const FrameMeta& meta() const = 0;
  virtual const Image& in(const std::string& port) const = 0;
  virtual Image& out(const std::string& port) = 0;
  virtual const Detections& detectionsIn(const std::string& port) const = 0;
  virtual Detections& detectionsOut(const std::string& port) = 0;
  virtual bool connected(const std::string& port) const = 0;
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual bool hasCuda() const { return false; }
  virtual void setup(PortSetup& ports) = 0;
  // CUDA backends enqueue on ctx.stream() and never block the host; CPU backends do the work here.
  virtual void process(ProcessContext& ctx) = 0;
  // True where process() waits for its own device work because its outputs are host data (face
  // boxes): the graph runs it, and what depends on it, on a second thread, so that the next frame's
  // other stages are enqueued meanwhile.
  virtual bool waitsForDevice() const { return false; }
  // What setup chose that the parameters leave open (a CUDA backend's layout for the device it
  // planned for), shown beside the backend in the graph's description; empty: nothing to say.
  virtual std::string choices() const { return {}; }
};

// What a source fills: its declared output images (host or pinned) and the frame's metadata.
class SourceFrame {
 public:
  virtual ~SourceFrame() = default;
  virtual Image& out(const std::string& port) = 0;
  virtual FrameMeta& meta() = 0;
  // Sources that fill their own buffers: this frame is in buffer set `set` (see bindBuffers).
  virtual void useSet(size_t set) = 0;
};

// One buffer set of a source: an image per output port, allocated by the graph.
using BufferSetImages = std::map<std::string, Image*>;

class Source {
 public:
  virtual ~Source() = default;
  virtual void setup(PortSetup& ports) = 0;
  // Live sources drop the oldest queued frame when the graph falls behind; file sources block.
  virtual bool live() const = 0;
  // Fills one frame; false at the end of the stream. Blocking waits honour `stopping`.
  virtual bool read(SourceFrame& frame, const std::function<bool()>& stopping) = 0;
  virtual std::vector<Counter> counters() const { return {}; }

  // Cameras fill buffers they handed to the driver instead of the one read() is given (no copy).
  // The graph then passes every buffer set once, before the first read; read() names the set each
  // frame is in (SourceFrame::useSet); recycle() gives a set back after its last reader finished.
  virtual bool fillsOwnBuffers() const { return false; }
  // Whether this source's camera timestamps run on a clock the other sources' share (PTP):
  // pipeline.pair_by camera_timestamp needs it. Sources that stamp frames themselves share the host's.
  virtual bool sharesClock() const { return true; }
  virtual void bindBuffers(const std::vector<BufferSetImages>& sets) {}
  virtual void recycle(size_t set) {}
};

// A finished frame as a sink sees it: host-readable images.
class SinkFrame {
 public:
  virtual ~SinkFrame() = default;
  virtual const FrameMeta& meta() const = 0;
  virtual const Image& in(const std::string& port) const = 0;
  virtual const Detections& detectionsIn(const std::string& port) const = 0;
};

// The metrics every metrics.interval_s (since the one before), for sinks that send them on.
struct MetricsReport {
  uint64_t frames = 0, drops = 0;  // so far
  double fps = 0, latencyP50Ms = 0, latencyP99Ms = 0;
  int slotsInUse = 0, slots = 0;
  std::vector<std::pair<std::string, const Counter*>> counters;  // every node's: node name, counter
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void setup(PortSetup& ports) = 0;
  virtual void consume(const SinkFrame& frame) = 0;
  virtual void finish() {}  // flush and close; called once after the last frame
  // Where this sink's output went, for the end-of-run summary ("out/frames/*.png").
  virtual std::string destination() const { return ""; }
  virtual std::vector<Counter> counters() const { return {}; }
  // Called from the metrics thread, while frames are consumed.
  virtual void report(const MetricsReport&) {}
};

}  // namespace pp
