// Graph node `stereo_sgm`: disparity, and depth and confidence when asked.
#include <optional>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"

namespace pp::stereo {

namespace {

// The matcher's parameters (sgmParamSchema) and what the stage adds: confidence and depth.
struct SgmStageParams : SgmParams {
  bool confidence = false;
  Path calibration;
  double baseline_focal = 0;
};

class StereoSgmStage : public Stage {
 public:
  using Params = SgmStageParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .include(sgmParamSchema())
            .add("confidence", &Params::confidence, "also output confidence (u8: how clearly the best disparity won)")
            .add("calibration", &Params::calibration,
                 "stereo calibration whose Q turns disparity into depth (output depth)", existingFile())
            .add("baseline_focal", &Params::baseline_focal,
                 "or depth = baseline_focal / disparity (output depth); 0: no depth", numberIn(0, 1e12));
    return schema;
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }
  std::string choices() const override { return layout_; }

  StereoSgmStage(const Params& p, ParamContext& ctx) : sgm_(p), confidence_(p.confidence) {
    try {
      checkParams(sgm_);
      if (!p.calibration.empty() && p.baseline_focal > 0)
        throw std::invalid_argument("give calibration or baseline_focal for depth, not both");
      if (!p.calibration.empty()) {
        StereoCalibration c = loadCalibration(p.calibration.value);
        depth_ = DepthModel{static_cast<float>(c.q[11]), static_cast<float>(c.q[14]), static_cast<float>(c.q[15])};
      } else if (p.baseline_focal > 0) {
        depth_ = DepthModel{static_cast<float>(p.baseline_focal), 1.f, 0.f};
      }
    } catch (const std::exception& e) {
      ctx.error(e.what());
    }
  }

  void setup(PortSetup& ports) override {
    const PortSpec* left = ports.imageInput("left", {{Depth::u8, 1}, {Depth::u8, 3}});
    const PortSpec* right = ports.imageInput("right", {{Depth::u8, 1}, {Depth::u8, 3}});
    if (!left || !right) return;
    if (left->width != right->width || left->height != right->height || left->format != right->format)
      return ports.fail("left (" + left->text() + ") and right (" + right->text() + ") must be one size and format");
    const bool cuda = ports.backend() == Backend::cuda, runs = ports.devices() == PortSetup::Devices::use;
    if (left->format.channels == 3 && runs)  // colour S0: matched on its luma
      for (Image& grey : grey_)
        grey = Image({Depth::u8, 1}, left->width, left->height, cuda ? MemoryKind::device : MemoryKind::host);
    ports.output("disparity", PortSpec::image({Depth::u16, 1}, left->width, left->height));
    if (depth_) ports.output("depth", PortSpec::image({Depth::f32, 1}, left->width, left->height));
    if (confidence_) ports.output("confidence", PortSpec::image({Depth::u8, 1}, left->width, left->height));
    if (cuda && runs) cuda_ = std::make_unique<SgmCuda>(sgm_, left->width, left->height);
    if (cuda) layout_ = cuda_ ? cuda_->layout() : sgmCudaLayout(sgm_, left->width, left->height);
  }

  void process(ProcessContext& ctx) override {
    Image& disparity = ctx.out("disparity");
    Image* confidence = confidence_ ? &ctx.out("confidence") : nullptr;
    const Image* pair[2] = {&ctx.in("left"), &ctx.in("right")};
    if (!grey_[0].empty()) {
      for (int i = 0; i < 2; ++i) {
        if (cuda_)
          lumaCuda(*pair[i], grey_[i], ctx.stream());
        else
          rgbToGrey(*pair[i], grey_[i]);
        pair[i] = &grey_[i];
      }
    }
    if (cuda_)
      cuda_->compute(*pair[0], *pair[1], disparity, confidence, ctx.stream());
    else
      sgmCpu(sgm_, *pair[0], *pair[1], disparity, confidence);
    if (!depth_) return;
    if (cuda_)
      depthCuda(disparity, *depth_, ctx.out("depth"), ctx.stream());
    else
      depthCpu(disparity, *depth_, ctx.out("depth"));
  }

 private:
  SgmParams sgm_;
  bool confidence_;
  std::optional<DepthModel> depth_;
  std::unique_ptr<SgmCuda> cuda_;  // where the graph runs (a graph built to validate allocates nothing)
  std::string layout_;             // the CUDA matcher's
  Image grey_[2];                  // colour inputs' luma
};

}  // namespace

void registerStereoSgmStage(Registry& registry) {
  registry.add<StereoSgmStage>(Role::stage, "stereo_sgm",
                               "semi-global matching: disparity (u16 x16), optional depth and confidence (inputs left, "
                               "right: rectified u8 grey, or RGB matched on its luma)");
}

}  // namespace pp::stereo
