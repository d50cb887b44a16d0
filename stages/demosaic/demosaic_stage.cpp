#include <algorithm>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

namespace {

struct DemosaicParams {
  std::string mosaic = "polar_rggb";
  std::string pixel_format = "mono8";
  std::vector<int> angles = {90, 45, 135, 0};
  std::string bayer = "rggb";
  std::string resolution = "half";
  std::vector<std::string> outputs = {"s0", "dolp", "aolp"};
};

class DemosaicStage : public Stage {
 public:
  using Params = DemosaicParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("mosaic", &Params::mosaic,
                 "polar_mono (IMX250MZR) or polar_rggb (IMX250MYR: 2x2 polarizer blocks on an RGGB grid)",
                 oneOf({"polar_mono", "polar_rggb"}))
            .add("pixel_format", &Params::pixel_format,
                 "raw samples: mono8; mono10, mono12, mono16 (u16 plane); packed as the camera sends them (u8 plane): "
                 "mono10p, mono12p (PFNC), mono10packed, "
                 "mono12packed (GigE Vision's older packing)",
                 oneOf(rawFormatNames()))
            .add("angles", &Params::angles,
                 "polarizer angle at each pixel of the 2x2 block, row-major (IMX250MZR and MYR: 90, 45, 135, 0)",
                 permutationOf({0, 45, 90, 135}))
            .add("bayer", &Params::bayer, "colour of each 2x2 block over the 4x4 period (polar_rggb)",
                 oneOf({"rggb", "bggr", "grbg", "gbrg"}))
            .add("resolution", &Params::resolution, "polar_mono: half (super-pixels) or full (each angle interpolated)",
                 oneOf({"half", "full"}))
            .add("outputs", &Params::outputs, "planes to produce (angles gives angle_0, angle_45, angle_90, angle_135)",
                 listOf(outputNames()));
    return schema;
  }

  DemosaicStage(const Params& p, ParamContext& ctx) : outputs_(p.outputs) {
    settings_.mosaic = p.mosaic == "polar_mono" ? Mosaic::mono : Mosaic::rggb;
    settings_.format = rawFormatOf(p.pixel_format);
    for (int i = 0; i < 4; ++i)
      settings_.layout.angleAt[i] = static_cast<uint8_t>(p.angles[static_cast<size_t>(i)] / 45);
    static const std::map<std::string, std::array<uint8_t, 4>> bayers = {
        {"rggb", {polar::R, polar::G, polar::G, polar::B}},
        {"bggr", {polar::B, polar::G, polar::G, polar::R}},
        {"grbg", {polar::G, polar::R, polar::B, polar::G}},
        {"gbrg", {polar::G, polar::B, polar::R, polar::G}}};
    std::copy_n(bayers.at(p.bayer).begin(), 4, settings_.layout.colourAt);
    bayer_ = p.bayer;
    angles_ = p.angles;
    settings_.fullResolution = p.resolution == "full";
    if (settings_.fullResolution && settings_.mosaic == Mosaic::rggb)
      ctx.error("resolution full is for polar_mono; polar_rggb demosaics at half resolution");
    if (outputs_.empty()) ctx.error("outputs is empty: ask for at least one plane");
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
    for (const auto& plane : planesFor(settings_, outputs_))
      ports.output(plane.name, PortSpec::image(plane.format, width, height));
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
  registry.add<DemosaicStage>(Role::stage, "demosaic",
                              "polarization demosaic: angle images, Stokes, DoLP, AoLP, HSV visual (input raw)");
}

}  // namespace pp::demosaic
