// Stage `face_detect`: faces on S0 (grey, or RGB made grey) as detections on port `faces`, each with its
// depth when a depth plane is connected. The CUDA backend waits for its window count each frame
// (boxes are host data), so the stage's stream is synchronised there: it says so (waitsForDevice),
// and the graph keeps enqueuing the next frame's other stages meanwhile.
#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/faces/faces.hpp"

namespace pp::faces {

namespace {

class FaceDetectStage : public Stage {
 public:
  using Params = FaceDetectParams;
  static const ParamSchema<Params>& schema() { return faceDetectParamSchema(); }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  FaceDetectStage(const Params& p, ParamContext& ctx) : params_(p) {
    try {
      checkDetectParams(p);
      cascade_ = loadCascade(p.cascade.value);
    } catch (const std::exception& e) {
      ctx.error(e.what());
    }
  }

  void setup(PortSetup& ports) override {
    const PortSpec* image = ports.imageInput("image", {{Depth::u8, 1}, {Depth::u8, 3}});
    const PortSpec* depth = ports.imageInput("depth", {{Depth::f32, 1}}, false);
    if (image && depth && (depth->width != image->width || depth->height != image->height))
      ports.fail("depth (" + ports.upstreamName("depth") + ", " + depth->text() + ") must be the image's size (" +
                 image->text() + ")");
    ports.output("faces", PortSpec::detections());
    if (image && ports.backend() == Backend::cuda && ports.devices() == PortSetup::Devices::use)
      cuda_ = std::make_unique<FaceDetectorCuda>(cascade_, params_, image->width, image->height);
  }

  void process(ProcessContext& ctx) override {
    Detections& faces = ctx.detectionsOut("faces");
    faces = cuda_ ? cuda_->detect(ctx.in("image"), ctx.stream()) : detectCpu(cascade_, ctx.in("image"), params_);
    if (ctx.connected("depth"))
      for (Box& face : faces) face.depth = boxDepth(ctx.in("depth"), face, ctx.stream());
  }

 private:
  Cascade cascade_;
  DetectParams params_;
  std::unique_ptr<FaceDetectorCuda> cuda_;
};

}  // namespace

void registerFaceDetectStage(Registry& registry) {
  registry.add<FaceDetectStage>(Role::stage, "face_detect",
                                "Viola-Jones faces with an OpenCV Haar cascade, as OpenCV's detectMultiScale (inputs "
                                "image u8 grey or RGB, optional depth f32; output faces)");
}

}  // namespace pp::faces
