// Source `polar_synth`: raw polarization frames made from a picture, with an AoLP field that turns
// a little every frame (the demo and tests use it: no camera, known truth).
#include "pipeline/image_io.hpp"
#include "pipeline/registry.hpp"
#include "stages/demosaic/synth.hpp"

namespace pp::demosaic {

namespace {

struct SynthSourceParams {
  Path picture;
  std::string mosaic = "polar_rggb";
  int bits = 8;
  int frames = 24;
  int variants = 8;          // distinct frames made up front, then repeated
  double aolp_step_deg = 5;  // AoLP turn from one frame to the next
  std::string aolp = "ramp";
  std::string dolp = "ramp";
};

class SynthSource : public Source {
 public:
  using Params = SynthSourceParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("picture", &Params::picture, "8-bit picture; each pixel becomes one 2x2 polarizer block",
                 existingFile())
            .add("mosaic", &Params::mosaic, "sensor layout of the raw frames", oneOf({"polar_rggb", "polar_mono"}))
            .add("bits", &Params::bits, "raw bit depth: 8 (u8 plane, mono8) or 16 (u16 plane, mono16)",
                 Rule<int>{"8 or 16", [](const int& b) { return b == 8 || b == 16; }})
            .add("frames", &Params::frames, "frames to produce; 0: endless", intIn(0, 100000000))
            .add("variants", &Params::variants,
                 "distinct frames made at start (each a further AoLP turn), then repeated", intIn(1, 256))
            .add("aolp_step_deg", &Params::aolp_step_deg, "AoLP turn per frame, degrees", numberIn(-180, 180))
            .add("aolp", &Params::aolp, "AoLP field: ramp, radial, or degrees")
            .add("dolp", &Params::dolp, "DoLP field: ramp or a value in [0, 1]");
    return schema;
  }

  SynthSource(const Params& p, ParamContext& ctx) : frames_(p.frames), mosaic_(p.mosaic), bits_(p.bits) {
    try {
      Image picture = readImage(p.picture.value);
      SynthOptions o;
      o.mosaic = p.mosaic == "polar_mono" ? Mosaic::mono : Mosaic::rggb;
      o.sixteenBit = p.bits == 16;
      o.aolp = p.aolp;
      o.dolp = p.dolp;
      for (int i = 0; i < p.variants; ++i) {
        o.aolpOffset = i * p.aolp_step_deg * M_PI / 180.0;
        variants_.push_back(synthesize(picture, o).raw);
      }
    } catch (const std::exception& e) {
      ctx.error(e.what());
    }
  }

  void setup(PortSetup& ports) override {
    const Image& raw = variants_.front();
    ports.output("raw", PortSpec::image(raw.format(), raw.width(), raw.height()));
  }
  bool live() const override { return false; }
  bool read(SourceFrame& frame, const std::function<bool()>&) override {
    if (frames_ > 0 && produced_ == static_cast<uint64_t>(frames_)) return false;
    copyImage(variants_[produced_ % variants_.size()], frame.out("raw"), nullptr);
    frame.meta().mosaic = mosaic_;
    frame.meta().bitDepth = bits_;
    ++produced_;
    return true;
  }

 private:
  int frames_;
  std::string mosaic_;
  int bits_;
  std::vector<Image> variants_;
  uint64_t produced_ = 0;
};

}  // namespace

void registerSynthSource(Registry& registry) {
  registry.add<SynthSource>(Role::source, "polar_synth",
                            "raw polarization frames made from a picture, AoLP turning frame by frame (output raw)");
}

}  // namespace pp::demosaic
