// Graph node `stereo_sgm`: disparity, and depth and confidence when asked.
#include <optional>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"

namespace pp::stereo {

namespace {

struct SgmStageParams {
  int disparities = 128, min_disparity = 0, paths = 8, p1 = 10, p2 = 120, uniqueness = 5, lr_max_diff = 1;
  bool p2_adaptive = false, subpixel = true, fill = true, median = true, confidence = false;
  Path calibration;
  double baseline_focal = 0;
};

class StereoSgmStage : public Stage {
 public:
  using Params = SgmStageParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("disparities", &Params::disparities, "disparity candidates",
                 Rule<int>{"64, 128 or 256", [](const int& d) { return d == 64 || d == 128 || d == 256; }})
            .add("min_disparity", &Params::min_disparity, "disparity of the first candidate",
                 intIn(0, kMaxMinDisparity))
            .add("paths", &Params::paths, "aggregation directions: 4 (rows, columns) or 8 (and diagonals)",
                 Rule<int>{"4 or 8", [](const int& n) { return n == 4 || n == 8; }})
            .add("p1", &Params::p1, "penalty of a one-step disparity change", intIn(0, 224))
            .add("p2", &Params::p2, "penalty of a larger change (p1..224)", intIn(0, 224))
            .add("p2_adaptive", &Params::p2_adaptive, "P2 divided by the intensity step along the path (at least P1)")
            .add("uniqueness", &Params::uniqueness, "percent by which the best cost must beat the second best (0: off)",
                 intIn(0, 99))
            .add("lr_max_diff", &Params::lr_max_diff, "largest left-right disparity difference kept (-1: no check)",
                 intIn(-1, 255))
            .add("subpixel", &Params::subpixel, "parabola sub-pixel refinement (1/16 pixel)")
            .add("fill", &Params::fill,
                 "invalid pixels take the background disparity of their row (their confidence is 0)")
            .add("median", &Params::median, "3x3 median of the valid disparities")
            .add("confidence", &Params::confidence, "also output confidence (u8: how clearly the best disparity won)")
            .add("calibration", &Params::calibration,
                 "stereo calibration whose Q turns disparity into depth (output depth)", existingFile())
            .add("baseline_focal", &Params::baseline_focal,
                 "or depth = baseline_focal / disparity (output depth); 0: no depth", numberIn(0, 1e12));
    return schema;
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  StereoSgmStage(const Params& p, ParamContext& ctx) : confidence_(p.confidence) {
    sgm_ = {p.disparities, p.min_disparity, p.paths,       p.p1,   p.p2,    p.p2_adaptive,
            p.uniqueness,  p.subpixel,      p.lr_max_diff, p.fill, p.median};
    try {
      checkParams(sgm_);
      if (!p.calibration.empty() && p.baseline_focal > 0)
        throw std::invalid_argument("give calibration or baseline_focal for depth, not both");
      if (!p.calibration.empty()) {
        StereoCalibration c = loadCalibration(p.calibration.value);
        depth_ =
            DepthFromDisparity{static_cast<float>(c.q[11]), static_cast<float>(c.q[14]), static_cast<float>(c.q[15])};
      } else if (p.baseline_focal > 0) {
        depth_ = DepthFromDisparity{static_cast<float>(p.baseline_focal), 1.f, 0.f};
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
    if (left->format.channels == 3)  // colour S0: matched on its luma
      for (Image& grey : grey_)
        grey = Image({Depth::u8, 1}, left->width, left->height,
                     ports.backend() == Backend::cuda ? MemoryKind::device : MemoryKind::host);
    ports.output("disparity", PortSpec::image({Depth::u16, 1}, left->width, left->height));
    if (depth_) ports.output("depth", PortSpec::image({Depth::f32, 1}, left->width, left->height));
    if (confidence_) ports.output("confidence", PortSpec::image({Depth::u8, 1}, left->width, left->height));
    if (ports.backend() == Backend::cuda) cuda_ = std::make_unique<SgmCuda>(sgm_, left->width, left->height);
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
  std::optional<DepthFromDisparity> depth_;
  std::unique_ptr<SgmCuda> cuda_;
  Image grey_[2];  // colour inputs' luma
};

}  // namespace

void registerStereoSgmStage(Registry& registry) {
  registry.add<StereoSgmStage>(Role::stage, "stereo_sgm",
                               "semi-global matching: disparity (u16 x16), optional depth and confidence (inputs left, "
                               "right: rectified u8 grey, or RGB matched on its luma)");
}

}  // namespace pp::stereo
