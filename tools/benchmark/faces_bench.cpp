// tools/bench cases faces/*: the default frontal-face cascade at 1224x1024 (the demosaiced S0) and
// 1920x1080, scale 1.1, minNeighbors 3, on tests/data/pictures/messi5.jpg resized to the size
// (noise when the file is not there). Timed from the picture in device memory to grouped boxes on
// the host; bytes moved = the picture, and the pyramid's images written once and read twice (the
// first stage and the later ones each read their tiles).
#include <filesystem>

#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::faces {
namespace {

class FacesRun : public bench::Run {
 public:
  FacesRun(int width, int height) : cascade_(loadCascade(cascadePath())) {
    Image picture({Depth::u8, 1}, width, height, MemoryKind::host);
    const char* messi = "tests/data/pictures/messi5.jpg";
    if (std::filesystem::exists(messi)) {
      resizeExact(readGreyImage(messi), picture);
    } else {
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          picture.view<uint8_t>().at(x, y) = static_cast<uint8_t>((x * 2654435761u ^ y * 40503u) >> 7);
      note_ = "noise picture; ";
    }
    device_ = Image(picture.format(), width, height, MemoryKind::device);
    copyImage(picture, device_, nullptr);
    detector_ = std::make_unique<FaceDetectorCuda>(cascade_, DetectParams{}, width, height);
    for (const Level& l : pyramid(cascade_, width, height, {})) bytes_ += static_cast<double>(l.width) * l.height * 3;
    pixels_ = static_cast<double>(width) * height;
  }
  void iterate(int, StreamHandle stream) override { faces_ = detector_->detect(device_, stream).size(); }
  double bytesMoved() const override { return bytes_ + pixels_; }
  double pixels() const override { return pixels_; }
  std::string note() const override { return note_ + std::to_string(faces_) + " faces"; }

 private:
  static std::string cascadePath() {
    const char* local = "tests/data/cascades/haarcascade_frontalface_default.xml";
    return std::filesystem::exists(local) ? local : defaultCascadePath();
  }
  Cascade cascade_;
  Image device_;
  std::unique_ptr<FaceDetectorCuda> detector_;
  double bytes_ = 0, pixels_ = 0;
  size_t faces_ = 0;
  std::string note_;
};

[[maybe_unused]] const bool registered = [] {
  bench::registry().push_back({"faces/1224x1024",
                               "Haar frontal faces, 1224x1024, scale 1.1, minNeighbors 3, boxes on the host", true,
                               [](bench::Size, int) { return std::make_unique<FacesRun>(1224, 1024); }});
  bench::registry().push_back({"faces/1920x1080",
                               "Haar frontal faces, 1920x1080, scale 1.1, minNeighbors 3, boxes on the host", true,
                               [](bench::Size, int) { return std::make_unique<FacesRun>(1920, 1080); }});
  return true;
}();

}  // namespace
}  // namespace pp::faces
