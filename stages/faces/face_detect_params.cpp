// face_detect's parameters, declared once for the YAML schema and the command line.
#include "stages/faces/faces.hpp"

namespace pp::faces {

namespace {
const ParamSchema<DetectParams>& detectParamSchema() {
  static const auto schema =
      ParamSchema<DetectParams>()
          .add("scale_factor", &DetectParams::scaleFactor, "pyramid step between window sizes", numberIn(1.0001, 4))
          .add("min_neighbors", &DetectParams::minNeighbors, "raw windows a face needs (0: report every raw window)",
               intIn(0, 1000))
          .add("min_size", &DetectParams::minSize, "smallest face side in pixels (0: the cascade's window)",
               intIn(0, 1 << 16))
          .add("max_size", &DetectParams::maxSize, "largest face side in pixels (0: the image; else at least min_size)",
               intIn(0, 1 << 16));
  return schema;
}
}  // namespace

const ParamSchema<FaceDetectParams>& faceDetectParamSchema() {
  static const auto schema = ParamSchema<FaceDetectParams>()
                                 .add("cascade", &FaceDetectParams::cascade,
                                      "OpenCV Haar cascade XML (default: opencv-data's frontal face)", existingFile())
                                 .include(detectParamSchema());
  return schema;
}

}  // namespace pp::faces
