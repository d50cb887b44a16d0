// The dof CPU reference: no foreground bleeding, focus unchanged, blur growing with distance,
// depth planes of other sizes and disparity, and the stage's configuration errors.
#include "stages/dof/dof.hpp"

#include <limits>

#include <fstream>

#include "pipeline/graph.hpp"
#include "pipeline/image_io.hpp"
#include "stages/dof/separable.hpp"
#include "stages/register.hpp"
#include "tests/support.hpp"

namespace pp::dof {
namespace {

Image constantDepth(int w, int h, float z) {
  Image depth({Depth::f32, 1}, w, h, MemoryKind::host);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) depth.view<float>().at(x, y) = z;
  return depth;
}

TEST(Dof, ASharpForegroundDoesNotBleedIntoTheBlurredBackground) {
  int w = 96, h = 80;
  Settings s{0.2f, 9.f, 9, {}};  // background at 1.0: radius 7.2
  Image scene({Depth::u8, 3}, w, h, MemoryKind::host);
  auto v = scene.view<uint8_t>();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      v.at(x, y, 0) = 0, v.at(x, y, 1) = static_cast<uint8_t>((x / 4 + y / 4) % 2 ? 220 : 30),
                 v.at(x, y, 2) = static_cast<uint8_t>(x * 2);
  Image depth = constantDepth(w, h, 1.0f);
  Image alone(scene.format(), w, h, MemoryKind::host);
  renderCpu(s, scene, depth, alone);

  auto inside = [](int x, int y) { return x >= 36 && x < 60 && y >= 28 && y < 52; };
  Image withObject(scene.format(), w, h, MemoryKind::host), objectDepth = constantDepth(w, h, 1.0f);
  copyImage(scene, withObject, nullptr);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (inside(x, y)) {
        for (int c = 0; c < 3; ++c)
          withObject.view<uint8_t>().at(x, y, c) = c == 0 ? 255 : 0;  // pure red, at the focus depth
        objectDepth.view<float>().at(x, y) = s.focusDepth;
      }
  Image rendered(scene.format(), w, h, MemoryKind::host);
  fillBytes(rendered, 0xA5);
  renderCpu(s, withObject, objectDepth, rendered);

  auto a = alone.view<uint8_t>(), b = rendered.view<uint8_t>();
  double diff = 0;
  int outside = 0, worstRed = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (inside(x, y)) {
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(b.at(x, y, c), c == 0 ? 255 : 0) << "the in-focus object stays sharp at " << x << "," << y;
        continue;
      }
      worstRed = std::max(worstRed, static_cast<int>(b.at(x, y, 0)));
      for (int c = 1; c < 3; ++c) diff += std::abs(a.at(x, y, c) - b.at(x, y, c));
      ++outside;
    }
  EXPECT_EQ(worstRed, 0) << "no red from the foreground reaches the background";
  // Beside the object the background misses only the samples the object hides.
  EXPECT_LT(diff / (2.0 * outside), 3.0);
}

// Pixels in front of the focus beyond r_max gather over their own window (their band edge is their
// own depth): the same sums, in the same order, as the separable blur of the masked image.
TEST(Dof, PixelsWithTheirOwnBandEdgeGatherAsTheSeparableBlur) {
  int w = 53, h = 37;
  Image image = test::randomImage({Depth::u8, 3}, w, h);
  Image depth = constantDepth(w, h, 10.f);  // in focus
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if ((x / 5 + y / 7) % 2) depth.view<float>().at(x, y) = 0.25f;  // in front: radius 9 * 9.75, clamped to r_max
  Settings s{10.f, 9.f, 6, {}};
  Image out(image.format(), w, h, MemoryKind::host);
  fillBytes(out, 0xA5);
  renderCpu(s, image, depth, out);

  // Everything is at or behind 0.25, so the near pixels blur the whole image with radius r_max.
  Image masked({Depth::f32, 4}, w, h, MemoryKind::host), blurred({Depth::f32, 4}, w, h, MemoryKind::host);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) masked.view<float>().at(x, y, c) = image.view<uint8_t>().at(x, y, c);
      masked.view<float>().at(x, y, 3) = 1.f;
    }
  filter::separableCpu(masked, blurred, filter::gaussianTaps(2 * s.rMax + 1, 0.5 * s.rMax));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        uint8_t expected =
            depth.view<float>().at(x, y) == 10.f
                ? image.view<uint8_t>().at(x, y, c)
                : static_cast<uint8_t>(std::clamp(
                      blurred.view<float>().at(x, y, c) / blurred.view<float>().at(x, y, 3) + 0.5f, 0.f, 255.f));
        ASSERT_EQ(out.view<uint8_t>().at(x, y, c), expected) << x << "," << y << " channel " << c;
      }
}

TEST(Dof, SettingsThatLeaveTheRadiusUndefinedAreRefused) {
  Image image = test::randomImage({Depth::u8, 1}, 8, 8), depth = constantDepth(8, 8, 1.f),
        out({Depth::u8, 1}, 8, 8, MemoryKind::host);
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (Settings s : {Settings{nan, 9.f, 9, {}}, Settings{1.f, nan, 9, {}}, Settings{inf, 9.f, 9, {}},
                     Settings{1.f, inf, 9, {}}, Settings{1.f, -1.f, 9, {}}, Settings{1.f, 9.f, kMaxRadius + 1, {}}})
    EXPECT_THROW(renderCpu(s, image, depth, out), std::invalid_argument) << s.focusDepth << " " << s.k << " " << s.rMax;
}

TEST(Dof, PixelsAtTheFocusDepthAreUnchanged) {
  int w = 41, h = 29;
  Image image = test::randomImage({Depth::u8, 3}, w, h);
  Image depth({Depth::f32, 1}, w, h, MemoryKind::host);
  std::uniform_real_distribution<float> z(0.1f, 3.f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) depth.view<float>().at(x, y) = (x + y) % 3 == 0 ? 1.5f : z(test::rng());
  Image out(image.format(), w, h, MemoryKind::host);
  renderCpu({1.5f, 9.f, 9, {}}, image, depth, out);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if ((x + y) % 3 == 0)
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(out.view<uint8_t>().at(x, y, c), image.view<uint8_t>().at(x, y, c)) << x << "," << y;
        }
}

TEST(Dof, WithKZeroNothingIsBlurred) {  // k = 0: every valid depth is in focus
  int w = 37, h = 23;
  Image image = test::randomImage({Depth::u8, 3}, w, h);
  Image depth({Depth::f32, 1}, w, h, MemoryKind::host);
  std::uniform_real_distribution<float> z(0.1f, 3.f);  // in front of the focus and behind it
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) depth.view<float>().at(x, y) = z(test::rng());
  Image out(image.format(), w, h, MemoryKind::host);
  fillBytes(out, 0xA5);
  renderCpu({1.5f, 0.f, 9, {}}, image, depth, out);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w * 3; ++x)
      ASSERT_EQ(out.view<uint8_t>().row(y)[x], image.view<uint8_t>().row(y)[x]) << x / 3 << "," << y;
}

TEST(Dof, BlurGrowsWithDistanceFromFocus) {
  int n = 41;
  Image impulse({Depth::u8, 1}, n, n, MemoryKind::host);
  fillBytes(impulse, 0);
  impulse.view<uint8_t>().at(n / 2, n / 2) = 255;
  int previousPeak = 256, previousSpread = -1;
  for (int z = 0; z <= 9; ++z) {
    Image out(impulse.format(), n, n, MemoryKind::host);
    renderCpu({1.f, 1.f, 9, {}}, impulse, constantDepth(n, n, 1.f + static_cast<float>(z)), out);  // radius z
    int peak = out.view<uint8_t>().at(n / 2, n / 2), spread = 0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) spread += out.view<uint8_t>().at(x, y) > 0;
    EXPECT_LT(peak, previousPeak) << "depth " << z;
    EXPECT_GT(spread, previousSpread) << "depth " << z;
    previousPeak = peak, previousSpread = spread;
  }
}

TEST(Dof, DepthPlanesOfOtherSizesAndDisparity) {
  Image large({Depth::f32, 1}, 8, 6, MemoryKind::host);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 8; ++x) large.view<float>().at(x, y) = static_cast<float>(x + 10 * y);
  Image atImage({Depth::f32, 1}, 4, 3, MemoryKind::host);
  depthForImage(large, false, 1.f, atImage);
  EXPECT_EQ(atImage.view<float>().at(3, 2), 6.f + 40.f);
  Image disparity({Depth::u16, 1}, 2, 1, MemoryKind::host), fromDisparity({Depth::f32, 1}, 4, 2, MemoryKind::host);
  disparity.view<uint16_t>().at(0, 0) = 160;  // 10 pixels
  disparity.view<uint16_t>().at(1, 0) = 0;    // invalid
  depthForImage(disparity, true, 50.f, fromDisparity);
  EXPECT_FLOAT_EQ(fromDisparity.view<float>().at(1, 1), 5.f);
  EXPECT_TRUE(std::isinf(fromDisparity.view<float>().at(3, 0)));
  EXPECT_FLOAT_EQ(radiusAt({1.f, 9.f, 9, {}}, std::numeric_limits<float>::infinity()), 9.f)
      << "invalid depth is fully blurred background";
  Image odd({Depth::f32, 1}, 7, 6, MemoryKind::host);
  EXPECT_THROW(depthForImage(odd, false, 1.f, atImage), std::invalid_argument);
}

class DofConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() / "image");
    writeImage(dir_ / "image/a.png", test::randomImage({Depth::u8, 3}, 32, 24));
  }
  std::vector<Diagnostic> build(int depthW, int depthH, const std::string& params) {
    Image depth = constantDepth(depthW, depthH, 1.f);
    std::filesystem::create_directories(dir_.path() / "depth");
    writeImage(dir_ / "depth/a.pfm", depth);
    std::string file = dir_ / "dof.yaml";
    std::ofstream(file) << "sources:\n  - {name: img, type: images, params: {path: image}}\n  - {name: z, type: "
                           "images, params: {path: depth}}\n"
                        << "stages:\n  - {name: blur, type: dof, inputs: {image: img.image, depth: z.image}, params: "
                        << params << "}\n";
    Registry registry;
    registerAllNodes(registry);
    Diagnostics d(file);
    PipelineSpec spec = loadPipeline(file, {}, d);
    Graph::build(spec, registry, d, {"cpu"});
    return d.errors();
  }
  std::string text(const std::vector<Diagnostic>& errors) {
    std::string all;
    for (const auto& e : errors) all += e.text() + "\n";
    return all;
  }
  test::TempDir dir_;
};

TEST_F(DofConfig, GoodSizesBuildAndBadOnesAreNamed) {
  EXPECT_TRUE(build(32, 24, "{}").empty());
  EXPECT_TRUE(build(64, 48, "{}").empty()) << "twice the size: scaled";
  EXPECT_NE(text(build(30, 24, "{}")).find("must be the image's size"), std::string::npos);
  EXPECT_NE(
      text(build(32, 24, "{r_max: 40}")).find("stages.blur.params.r_max: expected an integer in [0, 31], got '40'"),
      std::string::npos);
  EXPECT_NE(text(build(32, 24, "{focus: pixel, focus_pixel: [40, 3]}"))
                .find("focus_pixel [40, 3] is outside the 32x24 image"),
            std::string::npos);
  EXPECT_NE(text(build(32, 24, "{focus: faces}")).find("input 'faces' is not connected"), std::string::npos);
}

}  // namespace
}  // namespace pp::dof
