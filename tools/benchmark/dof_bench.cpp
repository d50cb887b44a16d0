// tools/bench cases filter/* and dof/*. filter: a 19-tap Gaussian on RGB8 at the frame size and at half of it (the
// demosaiced size). Bytes moved = the image read once + written once; the float intermediate
// between the passes is this implementation's cost, not a floor.
#include "stages/dof/dof.hpp"
#include "stages/dof/separable.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::filter {
namespace {

class GaussianRun : public bench::Run {
 public:
  GaussianRun(int width, int height, int sets, bool cuda) : cuda_(cuda), taps_(gaussianTaps(19)) {
    Format rgb{Depth::u8, 3};
    MemoryKind memory = cuda ? MemoryKind::device : MemoryKind::host;
    for (int i = 0; i < sets; ++i) {
      Image host = [&] {
        Image img(rgb, width, height, MemoryKind::host);
        auto v = img.view<uint8_t>();
        for (int y = 0; y < height; ++y)
          for (int x = 0; x < width * 3; ++x) v.row(y)[x] = static_cast<uint8_t>((x * 7 + y * 13 + i * 31) & 0xFF);
        return img;
      }();
      sources_.emplace_back(rgb, width, height, memory);
      copyImage(host, sources_.back(), nullptr);
      outputs_.emplace_back(rgb, width, height, memory);
    }
    if (cuda) {
      scratch_ = Image({Depth::f32, 3}, width, height, MemoryKind::device);
      filter_ = std::make_unique<SeparableCuda>(taps_);
    }
    pixels_ = static_cast<double>(width) * height;
  }
  void iterate(int index, StreamHandle stream) override {
    auto i = static_cast<size_t>(index);
    if (cuda_)
      filter_->apply(sources_[i], scratch_, outputs_[i], stream);
    else
      separableCpu(sources_[i], outputs_[i], taps_);
  }
  double bytesMoved() const override { return 2 * 3 * pixels_; }
  double pixels() const override { return pixels_; }

 private:
  bool cuda_;
  std::vector<float> taps_;
  std::vector<Image> sources_, outputs_;
  Image scratch_;
  std::unique_ptr<SeparableCuda> filter_;
  double pixels_ = 0;
};

[[maybe_unused]] const bool registered = [] {
  bench::registry().push_back(
      {"filter/gaussian19-rgb8", "19-tap Gaussian, RGB8, frame size", true,
       [](bench::Size s, int sets) { return std::make_unique<GaussianRun>(s.width, s.height, sets, true); }});
  bench::registry().push_back(
      {"filter/gaussian19-rgb8-half", "19-tap Gaussian, RGB8, half the frame size", true,
       [](bench::Size s, int sets) { return std::make_unique<GaussianRun>(s.width / 2, s.height / 2, sets, true); }});
  bench::registry().push_back(
      {"filter/gaussian19-rgb8-half/cpu", "19-tap Gaussian, RGB8, half the frame size (CPU reference)", false,
       [](bench::Size s, int) { return std::make_unique<GaussianRun>(s.width / 2, s.height / 2, 1, false); }});
  return true;
}();

}  // namespace
}  // namespace pp::filter

namespace pp::dof {
namespace {

// dof at half the frame size (the demosaiced image) with r_max 9: one gather pass; bytes moved =
// the image in + depth in + the image out. Depth either a ramp left to right, through every radius,
// or a portrait: a disc in focus at the centre (a fifth of the height across) before a background
// at r_max, as the graph's face before its scene.
enum class DepthScene { ramp, portrait };

class DofRun : public bench::Run {
 public:
  DofRun(int width, int height, int sets, int channels, DepthScene scene) : channels_(channels) {
    for (int i = 0; i < sets; ++i) {
      Image host({Depth::u8, channels}, width, height, MemoryKind::host),
          z({Depth::f32, 1}, width, height, MemoryKind::host);
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          for (int c = 0; c < channels; ++c)
            host.view<uint8_t>().at(x, y, c) = static_cast<uint8_t>((x * 5 + y * 3 + c * 50 + i) & 0xFF);
          const float dx = static_cast<float>(2 * x - width) / 2, dy = static_cast<float>(2 * y - height) / 2,
                      disc = 0.1f * static_cast<float>(height);
          z.view<float>().at(x, y) = scene == DepthScene::ramp         ? 0.3f + 1.2f * static_cast<float>(x) / width
                                     : dx * dx + dy * dy < disc * disc ? 0.8f
                                                                       : 3.f;
        }
      images_.emplace_back(host.format(), width, height, MemoryKind::device);
      depths_.emplace_back(z.format(), width, height, MemoryKind::device);
      outputs_.emplace_back(host.format(), width, height, MemoryKind::device);
      copyImage(host, images_.back(), nullptr);
      copyImage(z, depths_.back(), nullptr);
    }
    settings_ = {0.8f, 9.f, 9, {}};
    pixels_ = static_cast<double>(width) * height;
  }
  void iterate(int index, StreamHandle stream) override {
    auto i = static_cast<size_t>(index);
    renderCuda(settings_, images_[i], depths_[i], false, 1.f, outputs_[i], stream);
  }
  double bytesMoved() const override { return pixels_ * (2 * channels_ + 4); }
  double pixels() const override { return pixels_; }

 private:
  int channels_;
  std::vector<Image> images_, depths_, outputs_;
  Settings settings_;
  double pixels_ = 0;
};

[[maybe_unused]] const bool registered = [] {
  auto add = [](const char* name, const char* what, int channels, DepthScene scene) {
    bench::registry().push_back({name, what, true, [channels, scene](bench::Size s, int sets) {
                                   return std::make_unique<DofRun>(s.width / 2, s.height / 2, sets, channels, scene);
                                 }});
  };
  add("dof/rgb8-half-rmax9", "depth of field, RGB8 at half the frame size, r_max 9, depth ramp through every radius", 3,
      DepthScene::ramp);
  add("dof/grey8-half-rmax9", "the same on grey (mono sensors' S0)", 1, DepthScene::ramp);
  add("dof/grey8-half-rmax9-portrait",
      "grey, a disc in focus before a background at r_max (the graph's face before its scene)", 1,
      DepthScene::portrait);
  return true;
}();

}  // namespace
}  // namespace pp::dof
