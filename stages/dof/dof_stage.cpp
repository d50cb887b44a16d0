#include <algorithm>
#include <cmath>

#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/dof/dof.hpp"

namespace pp::dof {

namespace {

class DofStage : public Stage {
 public:
  using Params = DofParams;
  static const ParamSchema<Params>& schema() { return dofParamSchema(); }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  DofStage(const Params& p, ParamContext&) : p_(p), settings_(settingsOf(p)) {}

  void setup(PortSetup& ports) override {
    const PortSpec* image = ports.imageInput("image", {{Depth::u8, 3}, {Depth::u8, 1}});
    std::vector<Format> depthFormats = {{Depth::f32, 1}};
    if (p_.input == "disparity") depthFormats.push_back({Depth::u16, 1});
    const PortSpec* depth = ports.imageInput("depth", depthFormats);
    const PortSpec* faces = ports.input("faces", p_.focus == "faces");
    if (faces && faces->kind != PortKind::detections)
      ports.fail("input faces must be detections, but " + ports.upstreamName("faces") + " is an image");
    if (!image || !depth) return;
    bool larger = depth->width >= image->width;
    int a = larger ? depth->width : image->width, b = larger ? image->width : depth->width;
    int scale = b > 0 ? a / b : 0;
    bool multiple = scale > 0 && a == b * scale &&
                    (larger ? depth->height == image->height * scale : image->height == depth->height * scale);
    if (!multiple)
      ports.fail("depth (" + ports.upstreamName("depth") + ", " + depth->text() + ") must be the image's size (" +
                 image->text() + ") or an integer multiple of it");
    if (p_.focus == "pixel" && (p_.focus_pixel[0] >= image->width || p_.focus_pixel[1] >= image->height))
      ports.fail("focus_pixel [" + std::to_string(p_.focus_pixel[0]) + ", " + std::to_string(p_.focus_pixel[1]) +
                 "] is outside the " + std::to_string(image->width) + "x" + std::to_string(image->height) + " image");
    ports.output("image", *image);
    cuda_ = ports.backend() == Backend::cuda;
    if (!cuda_) depthAtImage_ = Image({Depth::f32, 1}, image->width, image->height, MemoryKind::host);
  }

  void process(ProcessContext& ctx) override {
    const Image& image = ctx.in("image");
    Settings s = settings_;
    if (p_.focus == "faces") {
      const Detections& faces = ctx.detectionsIn("faces");
      if (!faces.empty()) {  // without faces in this frame, the last ones keep the focus
        lastFaces_.clear();
        for (const Box& face : faces) {
          if (lastFaces_.size() == 16) break;
          lastFaces_.push_back({std::clamp(static_cast<int>(face.x + face.w / 2), 0, image.width() - 1),
                                std::clamp(static_cast<int>(face.y + face.h / 2), 0, image.height() - 1)});
        }
      }
      s.focusPixels = lastFaces_;
    }
    bool disparity = p_.input == "disparity";
    if (cuda_) {
      renderCuda(s, image, ctx.in("depth"), disparity, static_cast<float>(p_.baseline_focal), ctx.out("image"),
                 ctx.stream());
      return;
    }
    depthForImage(ctx.in("depth"), disparity, static_cast<float>(p_.baseline_focal), depthAtImage_);
    renderCpu(s, image, depthAtImage_, ctx.out("image"));
  }

 private:
  Params p_;
  Settings settings_;
  bool cuda_ = false;
  Image depthAtImage_;  // CPU backend: the depth at each image pixel
  std::vector<std::array<int, 2>> lastFaces_;
};

}  // namespace

void registerDofStage(Registry& registry) {
  registry.add<DofStage>(
      Role::stage, "dof",
      "depth of field by layered Gaussian blur without foreground bleeding (inputs image, depth, faces)");
}

}  // namespace pp::dof
