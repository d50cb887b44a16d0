// Stage `face_detect`: faces on S0 (grey, or RGB made grey) as detections on port `faces`, each with its
// depth when a depth plane is connected. The CUDA backend waits for its window count each frame
// (boxes are host data), so the stage's stream is synchronised there: it says so (waitsForDevice),
// and the graph keeps enqueuing the next frame's other stages meanwhile.
#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/faces/faces.hpp"

namespace pp::faces {

namespace {

struct FaceDetectParams {
  Path cascade{defaultCascadePath()};
  double scale_factor = 1.1;
  int min_neighbors = 3, min_size = 0, max_size = 0;
};

class FaceDetectStage : public Stage {
 public:
  using Params = FaceDetectParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("cascade", &Params::cascade, "OpenCV Haar cascade XML (default: opencv-data's frontal face)",
                 existingFile())
            .add("scale_factor", &Params::scale_factor, "pyramid step between window sizes", numberIn(1.0001, 4))
            .add("min_neighbors", &Params::min_neighbors, "raw windows a face needs (0: report every raw window)",
                 intIn(0, 1000))
            .add("min_size", &Params::min_size, "smallest face side in pixels (0: the cascade's window)",
                 intIn(0, 1 << 16))
            .add("max_size", &Params::max_size, "largest face side in pixels (0: the image)", intIn(0, 1 << 16));
    return schema;
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  FaceDetectStage(const Params& p, ParamContext& ctx)
      : params_{p.scale_factor, p.min_neighbors, p.min_size, p.max_size} {
    try {
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
    if (image && ports.backend() == Backend::cuda)
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
