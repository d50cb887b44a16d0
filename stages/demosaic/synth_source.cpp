// Source `polar_synth`: raw polarization frames made from a picture, with an AoLP field that turns
// a little every frame (the demo and tests use it: no camera, known truth).
#include "pipeline/image_io.hpp"
#include "pipeline/registry.hpp"
#include "stages/demosaic/synth.hpp"

namespace pp::demosaic {

namespace {

class SynthSource : public Source {
 public:
  using Params = SynthParams;
  static const ParamSchema<Params>& schema() { return synthParamSchema(); }

  SynthSource(const Params& p, ParamContext& ctx) : frames_(p.frames), mosaic_(p.mosaic), bits_(p.bits) {
    try {
      Image picture = readImage(p.picture.value);
      SynthOptions o = optionsOf(p);
      Image reflection;
      if (!p.reflection.empty()) {
        reflection = readImage(p.reflection.value);
        o.reflection = &reflection;
      }
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
