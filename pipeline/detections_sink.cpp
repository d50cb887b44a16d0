// Sink `detections`: one JSON object per frame and line (source, frame, camera timestamp, frame id,
// exposure, gain and other chunk values, host arrival on the steady clock, boxes) for every connected detections input;
// written as each frame finishes, so a crash loses at most a line.
#include <fstream>

#include "pipeline/detections_json.hpp"
#include "pipeline/output_path.hpp"
#include "pipeline/registry.hpp"

namespace pp {

nlohmann::json detectionsJson(const SinkFrame& frame, const std::vector<std::string>& inputs) {
  const FrameMeta& m = frame.meta();
  nlohmann::json line = {{"source", m.source},
                         {"frame", m.sequence},
                         {"camera_timestamp_ns", m.cameraTimestampNs},
                         {"received_steady_ns",
                          std::chrono::duration_cast<std::chrono::nanoseconds>(m.received.time_since_epoch()).count()}};
  // What the camera says of this frame (exposure 0: unknown; per frame where it sends chunk data).
  line["camera_frame_id"] = m.cameraFrameId;
  line["exposure_us"] = m.exposureUs;
  line["gain"] = m.gain;
  if (!m.chunks.empty()) line["chunks"] = m.chunks;
  for (const auto& name : inputs) {
    nlohmann::json boxes = nlohmann::json::array();
    for (const Box& b : frame.detectionsIn(name)) {
      nlohmann::json box = {{"x", b.x}, {"y", b.y}, {"w", b.w}, {"h", b.h}, {"neighbors", b.neighbors}};
      if (b.depth > 0) box["depth"] = b.depth;
      boxes.push_back(box);
    }
    line[name] = boxes;
  }
  return line;
}

namespace {

struct DetectionsParams {
  Path path;
  bool overwrite = true;
};

class DetectionsSink : public Sink {
 public:
  using Params = DetectionsParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("path", &Params::path, "the JSON-lines file to write (.jsonl); its folder is created when missing",
                 anyPath())
            .add("overwrite", &Params::overwrite, "replace an existing file (false: refuse to start)");
    return schema;
  }

  DetectionsSink(const Params& p, ParamContext& ctx) : path_(p.path.value) {
    if (p.path.empty())
      ctx.error("path is required: the .jsonl file to write detections to");
    else if (!p.overwrite && std::filesystem::exists(path_))
      ctx.error(path_ + " exists and overwrite is false");
  }

  void setup(PortSetup& ports) override {
    inputs_ = ports.connectedInputs();
    if (inputs_.empty()) ports.fail("connect at least one detections input (e.g. faces: detector.faces)");
    for (const auto& name : inputs_)
      if (const PortSpec* spec = ports.input(name); spec && spec->kind != PortKind::detections)
        ports.fail("input '" + name + "' is an image; detections writes boxes");
    if (ports.devices() != PortSetup::Devices::use) {  // validate: checked, not written
      if (std::string why = whyNotWritable(path_); !why.empty()) ports.fail("cannot write " + path_ + ": " + why);
      return;
    }
    std::error_code ec;
    auto folder = std::filesystem::path(path_).parent_path();
    if (!folder.empty()) std::filesystem::create_directories(folder, ec);
    out_.open(path_, std::ios::trunc);
    if (!out_) ports.fail("cannot write " + path_);
  }

  void consume(const SinkFrame& frame) override {
    nlohmann::json line = detectionsJson(frame, inputs_);
    out_ << line.dump() << '\n';
    out_.flush();
    if (!out_) throw std::runtime_error("writing " + path_ + " failed (disk full?)");
  }

  std::string destination() const override { return path_; }

 private:
  std::string path_;
  std::vector<std::string> inputs_;
  std::ofstream out_;
};

}  // namespace

void registerDetectionsSink(Registry& registry) {
  registry.add<DetectionsSink>(
      Role::sink, "detections",
      "boxes of every frame as JSON lines (source, frame, timestamps, x y w h neighbors [depth])");
}

}  // namespace pp
