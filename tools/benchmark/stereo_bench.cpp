// tools/bench cases stereo/* and rectify/*. SGM on textured pairs with a true disparity at half the
// frame size (the demosaiced S0) with 128 disparities and at the frame size with 256, 4 and 8
// paths, and Middlebury's Aloe size. Bytes moved = the volume traffic of the layout the case runs,
// not a floor (SgmCuda::volumePasses: a reduction a read and a write; where the volume holds the
// matching costs, a walker's reads of its costs are not counted: they fetch the lines its
// reductions then change). The note gives the device memory the matcher holds and the layout it
// runs.
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::stereo {
namespace {

Image texture(int width, int height, int seed, int shift) {
  Image img({Depth::u8, 1}, width, height, MemoryKind::host);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      unsigned v = static_cast<unsigned>((x + shift) / 2 * 2654435761u ^ (y / 2) * 40503u ^ seed * 97u);
      img.view<uint8_t>().at(x, y) = static_cast<uint8_t>((v >> 13) & 0xFF);
    }
  return img;
}

class SgmRun : public bench::Run {
 public:
  SgmRun(int width, int height, int disparities, int paths, int sets, Sweeps sweeps = Sweeps::off) {
    p_.disparities = disparities;
    p_.paths = paths;
    p_.sweeps = sweeps;
    for (int i = 0; i < sets; ++i) {
      Image l = texture(width, height, i, 0), r = texture(width, height, i, disparities / 3);
      lefts_.emplace_back(l.format(), width, height, MemoryKind::device);
      rights_.emplace_back(l.format(), width, height, MemoryKind::device);
      copyImage(l, lefts_.back(), nullptr);
      copyImage(r, rights_.back(), nullptr);
    }
    disparity_ = Image({Depth::u16, 1}, width, height, MemoryKind::device);
    sgm_ = std::make_unique<SgmCuda>(p_, width, height);
    pixels_ = static_cast<double>(width) * height;
  }
  void iterate(int index, StreamHandle stream) override {
    auto i = static_cast<size_t>(index);
    sgm_->compute(lefts_[i], rights_[i], disparity_, nullptr, stream);
  }
  double bytesMoved() const override { return pixels_ * p_.disparities * 2.0 * sgm_->volumePasses(); }
  double pixels() const override { return pixels_; }
  std::string note() const override {
    double mb = (sgm_->deviceBytes() + lefts_[0].bytes() + rights_[0].bytes() + disparity_.bytes()) / 1e6;
    return "device memory " + std::to_string(static_cast<int>(mb)) + " MB (volume " +
           std::to_string(static_cast<int>(pixels_ * p_.disparities * 2 / 1e6)) + " MB); " + sgm_->layout();
  }

 private:
  SgmParams p_;
  std::vector<Image> lefts_, rights_;
  Image disparity_;
  std::unique_ptr<SgmCuda> sgm_;
  double pixels_ = 0;
};

// Both images of a pair through their rectification maps.
class RectifyRun : public bench::Run {
 public:
  RectifyRun(int width, int height, int sets) {
    Camera cam{{700, 0, width / 2.0, 0, 700, height / 2.0, 0, 0, 1},
               {-0.25, 0.1, 0.001, -0.001, 0},
               {0.9998, 0.02, 0, -0.02, 0.9998, 0, 0, 0, 1},
               {680, 0, width / 2.0, 0, 0, 680, height / 2.0, 0, 0, 0, 1, 0}};
    Image map = rectifyMap(cam, width, height);
    map_ = Image(map.format(), width, height, MemoryKind::device);
    copyImage(map, map_, nullptr);
    for (int i = 0; i < 2 * sets; ++i) {
      sources_.emplace_back(Format{Depth::u8, 1}, width, height, MemoryKind::device);
      copyImage(texture(width, height, i, 0), sources_.back(), nullptr);
      outputs_.emplace_back(Format{Depth::u8, 1}, width, height, MemoryKind::device);
    }
    pixels_ = static_cast<double>(width) * height;
  }
  void iterate(int index, StreamHandle stream) override {
    for (int k = 0; k < 2; ++k) remapCuda(sources_[2 * index + k], map_, outputs_[2 * index + k], stream);
  }
  double bytesMoved() const override { return 2 * pixels_ * (1 + 8 + 1); }  // per image: source, map, output
  double pixels() const override { return 2 * pixels_; }

 private:
  Image map_;
  std::vector<Image> sources_, outputs_;
  double pixels_ = 0;
};

[[maybe_unused]] const bool registered = [] {
  // Each size and path count by the walkers (`sweeps: false`), and with `sweeps: true`: the sweeps
  // (8 paths) or the rows walked around the other walkers (4 paths); 8 paths at 256 disparities also
  // as `auto` takes them (on a big GPU the rows around, on a Jetson the sweeps).
  for (int paths : {8, 4}) {
    for (bool half : {true, false}) {
      const std::string name =
          std::string("stereo/sgm-") + (half ? "half-d128-p" : "full-d256-p") + std::to_string(paths);
      const std::string what = std::string(half ? "SGM at half the frame size, 128" : "SGM at the frame size, 256") +
                               " disparities, " + std::to_string(paths) + " paths";
      auto add = [&](const std::string& suffix, const std::string& how, Sweeps choice) {
        bench::registry().push_back({name + suffix, what + how + ", sub-pixel", true, [=](bench::Size s, int sets) {
                                       const int scale = half ? 2 : 1;
                                       return std::make_unique<SgmRun>(s.width / scale, s.height / scale,
                                                                       half ? 128 : 256, paths, sets, choice);
                                     }});
      };
      add("", " by the walkers", Sweeps::off);
      if (paths == 8) {
        if (!half) add("-auto", " as `sweeps: auto` takes them", Sweeps::automatic);
        add("-sweeps", " with the directions from above and below in sweeps", Sweeps::on);
      } else {
        add("-rows", " with the rows walked around the other walkers", Sweeps::on);
      }
    }
  }
  bench::registry().push_back(
      {"stereo/sgm-aloe-d256-p8", "SGM at Middlebury Aloe's 1282x1110, 256 disparities, 8 paths, sub-pixel", true,
       [](bench::Size, int sets) { return std::make_unique<SgmRun>(1282, 1110, 256, 8, sets); }});
  bench::registry().push_back(
      {"rectify/pair-half", "undistort + rectify both images of a pair at half the frame size (u8)", true,
       [](bench::Size s, int sets) { return std::make_unique<RectifyRun>(s.width / 2, s.height / 2, sets); }});
  return true;
}();

}  // namespace
}  // namespace pp::stereo
