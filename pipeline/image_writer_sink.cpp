// Sink `image_writer`: every connected image input of every frame to a file, PNG (8/16-bit) or
// PGM for integer planes and PFM for float planes.
#include <cstdio>
#include <filesystem>

#include "pipeline/image_io.hpp"
#include "pipeline/output_path.hpp"
#include "pipeline/registry.hpp"

namespace pp {

namespace {

struct ImageWriterParams {
  Path dir;
  std::string format = "png";
  int every = 1;
};

class ImageWriterSink : public Sink {
 public:
  using Params = ImageWriterParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("dir", &Params::dir, "output folder, created when missing; files are INPUT_FRAME.EXT")
            .add("format", &Params::format, "file format of 8 and 16-bit planes (float planes are always .pfm)",
                 oneOf({"png", "pgm"}))
            .add("every", &Params::every, "write every Nth frame", intIn(1, 1000000));
    return schema;
  }

  ImageWriterSink(const Params& p, ParamContext& ctx) : params_(p) {
    if (p.dir.empty()) ctx.error("dir is required: the folder to write the images to");
  }

  void setup(PortSetup& ports) override {
    inputs_ = ports.connectedInputs();
    if (inputs_.empty()) ports.fail("connect at least one image under inputs");
    for (const auto& name : inputs_) {
      const PortSpec* spec = ports.input(name);
      if (spec && spec->kind != PortKind::image)
        ports.fail("input '" + name + "' carries detections; image_writer writes images");
    }
    if (ports.devices() != PortSetup::Devices::use) {  // validate: checked, not made
      if (std::string why = whyNotWritable(params_.dir.value, true); !why.empty())
        ports.fail("cannot write to " + params_.dir.value + ": " + why);
      return;
    }
    std::error_code ec;
    std::filesystem::create_directories(params_.dir.value, ec);
    if (ec) ports.fail("cannot create " + params_.dir.value + ": " + ec.message());
  }

  void consume(const SinkFrame& frame) override {
    if (frame.meta().sequence % static_cast<uint64_t>(params_.every) != 0) return;
    for (const auto& name : inputs_) {
      const Image& image = frame.in(name);
      const char* ext = image.format().depth == Depth::f32 ? "pfm"
                        : params_.format == "pgm" && image.format().channels != 4
                            ? (image.format().channels == 1 ? "pgm" : "ppm")
                            : "png";
      char file[64];
      std::snprintf(file, sizeof file, "_%06llu.%s", static_cast<unsigned long long>(frame.meta().sequence), ext);
      writeImage((std::filesystem::path(params_.dir.value) / (name + file)).string(), image);
    }
    ++written_;
  }

  std::string destination() const override { return params_.dir.value + " (" + std::to_string(written_) + " frames)"; }

 private:
  Params params_;
  std::vector<std::string> inputs_;
  uint64_t written_ = 0;
};

}  // namespace

void registerImageWriterSink(Registry& registry) {
  registry.add<ImageWriterSink>(Role::sink, "image_writer",
                                "each frame's chosen planes as PNG/PGM (integer) or PFM (float) files");
}

void registerImagesSource(Registry& registry);
void registerDetectionsSink(Registry& registry);
#if POLARPIPE_WITH_GSTREAMER
namespace gst {
void registerVideoSink(Registry& registry);
void registerRecordSink(Registry& registry);
void registerReplaySource(Registry& registry);
}  // namespace gst
#endif

#if POLARPIPE_WITH_ARAVIS
namespace aravis {
void registerAravisSource(Registry& registry);
}
#endif
#if POLARPIPE_WITH_MQTT
namespace mqtt {
void registerMqttSink(Registry& registry);
}
#endif

void registerPipelineNodes(Registry& registry) {
  registerImagesSource(registry);
  registerImageWriterSink(registry);
  registerDetectionsSink(registry);
#if POLARPIPE_WITH_ARAVIS
  aravis::registerAravisSource(registry);
#endif
#if POLARPIPE_WITH_MQTT
  mqtt::registerMqttSink(registry);
#endif
#if POLARPIPE_WITH_GSTREAMER
  gst::registerVideoSink(registry);
  gst::registerRecordSink(registry);
  gst::registerReplaySource(registry);
#endif
}

}  // namespace pp
