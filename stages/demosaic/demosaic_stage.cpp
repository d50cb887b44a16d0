#include <algorithm>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

namespace {

class DemosaicStage : public Stage {
 public:
  using Params = DemosaicParams;
  static const ParamSchema<Params>& schema() { return demosaicParamSchema(); }

  DemosaicStage(const Params& p, ParamContext& ctx) : bayer_(p.bayer), angles_(p.angles), outputs_(p.outputs) {
    try {
      settings_ = settingsOf(p);
    } catch (const std::invalid_argument& e) {
      ctx.error(e.what());
    }
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  void setup(PortSetup& ports) override {
    cuda_ = ports.backend() == Backend::cuda;
    for (const auto& plane : planesFor(settings_, outputs_)) names_.push_back(plane.name);
    const PortSpec* raw = ports.imageInput("raw", {{polar::isWide(settings_.format) ? Depth::u16 : Depth::u8, 1}});
    if (!raw) return;
    int width = 0, height = 0;
    std::string problem = checkRawSize(settings_, raw->width, raw->height, width, height);
    if (!problem.empty()) {
      ports.fail(ports.upstreamName("raw") + ": " + problem);
      return;
    }
    for (const auto& plane : planesFor(settings_, outputs_)) {
      PortSpec spec = PortSpec::image(plane.format, width, height);
      if (plane.format.depth == Depth::u16) spec.otherFormats = "demosaic's depth: u8 makes it u8";
      ports.output(plane.name, spec);
    }
  }

  void process(ProcessContext& ctx) override {
    // A camera (or recording) says what its sensor is: a frame of the other layout is a config error.
    const std::string& sensor = ctx.meta().mosaic;
    if (!sensor.empty() && sensor != mosaicName())
      throw std::runtime_error("the frame comes from a " + sensor + " sensor, but this stage demosaics " +
                               mosaicName() + " (set mosaic: " + sensor + ")");
    const std::string& phase = ctx.meta().bayer;
    if (settings_.mosaic == Mosaic::rggb && !phase.empty() && phase != bayer_)
      throw std::runtime_error("the camera's 2x2 blocks are " + phase +
                               " (from its pixel format), but this stage reads them as " + bayer_ +
                               " (set bayer: " + phase + ")");
    const std::vector<int>& angles = ctx.meta().angles;
    if (!angles.empty() && angles != angles_)
      throw std::runtime_error("the camera's 2x2 blocks hold the polarizer angles " + toText(angles) +
                               " (its source's angles), but this stage reads them as " + toText(angles_) +
                               " (set angles: " + toText(angles) + ")");
    const std::string& samples = ctx.meta().sampleFormat;
    if (!samples.empty() && samples != rawFormatName(settings_.format))
      throw std::runtime_error("the frame's samples are " + samples +
                               " (from the camera's pixel format), but this stage reads " +
                               rawFormatName(settings_.format) + " (set pixel_format: " + samples + ")");
    std::map<std::string, Image*> out;
    for (const auto& name : names_) out[name] = &ctx.out(name);
    run(settings_, ctx.in("raw"), out, cuda_, ctx.stream());
  }

 private:
  const char* mosaicName() const { return settings_.mosaic == Mosaic::mono ? "polar_mono" : "polar_rggb"; }

  Settings settings_;
  std::string bayer_;
  std::vector<int> angles_;
  std::vector<std::string> outputs_;
  std::vector<std::string> names_;  // output planes, in order
  bool cuda_ = false;
};

}  // namespace

void registerDemosaicStage(Registry& registry) {
  registry.add<DemosaicStage>(
      Role::stage, "demosaic",
      "polarization demosaic: angle images, Stokes, DoLP, AoLP, HSV visual, polarizers' images (min, max, "
      "polarizer), surface normals (input raw)");
}

}  // namespace pp::demosaic
