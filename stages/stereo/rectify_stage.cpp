// Graph node `rectify`: a calibrated pair, undistorted and rectified.
#include <optional>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/stereo/calibration.hpp"

namespace pp::stereo {

namespace {

struct RectifyParams {
  Path calibration;
};

class RectifyStage : public Stage {
 public:
  using Params = RectifyParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema = ParamSchema<Params>().add(
        "calibration", &Params::calibration,
        "stereo calibration: OpenCV FileStorage YAML or plain YAML with M1 D1 M2 D2 R T R1 R2 P1 P2 Q", existingFile());
    return schema;
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  RectifyStage(const Params& p, ParamContext& ctx) {
    if (p.calibration.empty()) {
      ctx.error("calibration is required: the stereo calibration file");
      return;
    }
    try {
      calibration_ = loadCalibration(p.calibration.value);
    } catch (const std::exception& e) {
      ctx.error(e.what());
    }
  }

  void setup(PortSetup& ports) override {
    std::vector<Format> formats = {{Depth::u8, 1}, {Depth::u8, 3}};
    const PortSpec* left = ports.imageInput("left", formats);
    const PortSpec* right = ports.imageInput("right", formats);
    if (!left || !right || !calibration_) return;
    if (left->width != right->width || left->height != right->height || left->format != right->format)
      return ports.fail("left (" + left->text() + ") and right (" + right->text() + ") must match");
    try {
      checkCalibrationSize(*calibration_, left->width, left->height);
    } catch (const std::invalid_argument& e) {
      return ports.fail(e.what());
    }
    ports.output("left", *left);
    ports.output("right", *right);
    cuda_ = ports.backend() == Backend::cuda;
    if (ports.devices() != PortSetup::Devices::use) return;  // a graph built to validate makes no maps
    Image maps[2] = {rectifyMap(calibration_->left, left->width, left->height),
                     rectifyMap(calibration_->right, left->width, left->height)};
    for (int i = 0; i < 2; ++i) {
      if (!cuda_) {
        maps_[i] = std::move(maps[i]);
        continue;
      }
      maps_[i] = Image(maps[i].format(), left->width, left->height, MemoryKind::device);
      Stream upload;
      copyImage(maps[i], maps_[i], upload.handle());
      upload.synchronize();
    }
  }

  void process(ProcessContext& ctx) override {
    const char* sides[2] = {"left", "right"};
    for (int i = 0; i < 2; ++i) {
      if (cuda_)
        remapCuda(ctx.in(sides[i]), maps_[i], ctx.out(sides[i]), ctx.stream());
      else
        remapCpu(ctx.in(sides[i]), maps_[i], ctx.out(sides[i]));
    }
  }

 private:
  std::optional<StereoCalibration> calibration_;
  Image maps_[2];  // source coordinates of each rectified pixel, left and right
  bool cuda_ = false;
};

}  // namespace

void registerRectifyStage(Registry& registry) {
  registry.add<RectifyStage>(
      Role::stage, "rectify",
      "undistort and rectify a calibrated stereo pair (inputs left, right; outputs left, right)");
}

}  // namespace pp::stereo
