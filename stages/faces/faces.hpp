// Face detection with a Haar cascade, reproducing OpenCV 4's CascadeClassifier::detectMultiScale:
// the pyramid (factors multiplied in double, kept as float; each level resized with OpenCV's
// bit-exact bilinear resize), a window step of 2 below scale 2 and 1 above, the next window skipped
// after a rejection in the first stage, integral and squared integral images, variance
// normalisation over the window inset by one pixel (windows with area / sqrt(nf) >= 0.1 rejected),
// stumps summed in double per stage, and groupRectangles (eps 0.2).
#pragma once
#include <vector>

#include "config/params.hpp"
#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"
#include "pipeline/node.hpp"
#include "stages/faces/cascade.hpp"

namespace pp::faces {

struct DetectParams {
  double scaleFactor = 1.1;
  int minNeighbors = 3;
  int minSize = 0;  // smallest window side in pixels (0: the cascade's)
  int maxSize = 0;  // largest (0: the image)
};

// What face_detect and `polarpipe faces` take: the cascade and the detection parameters, declared
// once as YAML keys and command-line options.
struct FaceDetectParams : DetectParams {
  Path cascade{defaultCascadePath()};
};
const ParamSchema<FaceDetectParams>& faceDetectParamSchema();

// A window the cascade accepted, in image pixels.
struct Window {
  int x = 0, y = 0, w = 0, h = 0;
  friend bool operator==(const Window& a, const Window& b) {
    return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h;
  }
};

// One pyramid level: the image resized by 1/scale; windows step `step` pixels.
struct Level {
  float scale = 1;
  int width = 0, height = 0;
  int step = 2;
};
// Throws std::invalid_argument, naming the parameter, when p.scaleFactor is not a finite number > 1
// or min_size is larger than max_size (both given).
void checkDetectParams(const DetectParams& p);
// Throws as checkDetectParams.
std::vector<Level> pyramid(const Cascade& c, int width, int height, const DetectParams& p);

// The window at (x, y) of the level with `scale`, as OpenCV reports it in a width x height image:
// position and size scaled and rounded half to even, cut at the right and bottom edges.
Window reportedWindow(const Cascade& c, float scale, int x, int y, int width, int height);

// OpenCV's bit-exact bilinear coefficients along one axis: for each destination index the source
// index and the weight of the next sample in 1/256. Indices below `before` repeat the first
// sample, from `after` on the last one.
struct ResizeAxis {
  std::vector<int> index, weight;
  int before = 0, after = 0;
};
ResizeAxis resizeAxis(int srcSize, int dstSize);

// OpenCV's INTER_LINEAR_EXACT resize of a u8x1 host image (INTER_AREA for an exact halving, a copy
// at the same size).
void resizeExact(const Image& src, Image& dst);

// Every accepted window (minNeighbors 0), level by level, rows top to bottom.
std::vector<Window> detectRawCpu(const Cascade& c, const Image& grey, const DetectParams& p);

// groupRectangles: clusters of similar windows with more than minNeighbors members, averaged, and
// not inside a stronger cluster; neighbors = the cluster's size. minNeighbors 0: every window.
Detections groupWindows(const std::vector<Window>& windows, int minNeighbors, double eps = 0.2);

// Faces in a u8x1 image, or a u8x3 RGB one made grey first (rgbToGrey).
Detections detectCpu(const Cascade& c, const Image& image, const DetectParams& p);

// The depth of a face: the median of the valid (finite, > 0) samples of an f32 depth plane of the
// image's size over the central third of the box; 0 when there are none. The plane may be in device
// memory (the region is copied on `stream`, which is then waited for).
float boxDepth(const Image& depth, const Box& box, StreamHandle stream);

// CUDA: the same windows from the device. Holds the cascade in device memory and per-level buffers
// for one image size.
class FaceDetectorCuda {
 public:
  FaceDetectorCuda(const Cascade& c, const DetectParams& p, int width, int height);
  ~FaceDetectorCuda();
  // Windows read back with their count, in one wait; a frame that gives more waits once more.
  static constexpr size_t kWindowsReadWithCount = 1024;

  // `image` u8x1 (or u8x3 RGB, made grey first) in device memory; enqueues on `stream` and waits
  // for the window count.
  std::vector<Window> detectRaw(const Image& image, StreamHandle stream);
  Detections detect(const Image& image, StreamHandle stream) {
    return groupWindows(detectRaw(image, stream), p_.minNeighbors);
  }

 private:
  struct State;
  DetectParams p_;
  std::unique_ptr<State> state_;
};

}  // namespace pp::faces
