// CUDA dof against the CPU reference: random pictures and depth maps with sharp steps everywhere
// (the kernel's masked path), smooth with one step (mostly its unmasked path), or a disc in focus
// before a background beyond r_max's depth (mostly its separable path: every pixel of a warp at
// r_max), odd sizes, grey and RGB, focus by depth and by pixels, depth planes of other sizes and
// disparity, k = 0; poisoned outputs; 8-bit results within 1.
#include "stages/dof/dof.hpp"

#include "tests/support.hpp"

namespace pp::dof {
namespace {

struct Case {
  int channels, width, height, rMax;
  int planeScale;  // > 0: the plane is this times larger; < 0: this times smaller
  bool disparity;
  bool focusPixel;
  enum class Depths { patches, smooth, portrait } depths = Depths::patches;
  float k = 6.f;  // radius steps per unit of depth (0: nothing valid is blurred)
};

class CudaDof : public ::testing::TestWithParam<Case> {};

TEST_P(CudaDof, MatchesTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const Case& c = GetParam();
  Image image = test::randomImage({Depth::u8, c.channels}, c.width, c.height);
  int pw = c.planeScale > 0 ? c.width * c.planeScale : c.width / -c.planeScale,
      ph = c.planeScale > 0 ? c.height * c.planeScale : c.height / -c.planeScale;
  Image plane(c.disparity ? Format{Depth::u16, 1} : Format{Depth::f32, 1}, pw, ph, MemoryKind::host);
  std::uniform_real_distribution<float> z(0.2f, 2.5f);
  for (int y = 0; y < ph; ++y)
    for (int x = 0; x < pw; ++x) {
      float v = (x / 7 + y / 5) % 4 == 0 ? 0.5f : z(test::rng());  // patches at one depth and noise: steps everywhere
      if (c.depths == Case::Depths::smooth) {                      // a ramp with one nearer rectangle
        bool inRectangle = x > pw / 3 && x < pw / 2 && y > ph / 3 && y < ph / 2;
        v = inRectangle ? 0.45f
                        : 0.3f + 1.2f * static_cast<float>(x) / static_cast<float>(pw) +
                              0.3f * static_cast<float>(y) / static_cast<float>(ph);
      }
      if (c.depths == Case::Depths::portrait) {  // a disc at the focus before 8 (radius 6 x 7.5: r_max)
        const int dx = 2 * x - pw, dy = 2 * y - ph;
        v = dx * dx + dy * dy < ph * ph / 4 ? 0.5f : 8.f;
      }
      if ((x * 31 + y * 17) % 97 == 0)
        v = c.disparity ? 0.f : std::numeric_limits<float>::quiet_NaN();  // invalid samples
      if (c.disparity)
        plane.view<uint16_t>().at(x, y) = static_cast<uint16_t>(v == 0.f ? 0 : 16.f * 40.f / v);
      else
        plane.view<float>().at(x, y) = v;
    }
  Settings s{0.5f, c.k, c.rMax, {}};
  if (c.focusPixel) s.focusPixels = {{c.width / 3, c.height / 2}, {c.width - 1, 0}};
  float bf = 40.f;

  Image depth({Depth::f32, 1}, c.width, c.height, MemoryKind::host),
      expected(image.format(), c.width, c.height, MemoryKind::host);
  depthForImage(plane, c.disparity, bf, depth);
  renderCpu(s, image, depth, expected);

  Stream stream;
  Image deviceImage(image.format(), c.width, c.height, MemoryKind::device),
      devicePlane(plane.format(), pw, ph, MemoryKind::device);
  Image deviceOut(image.format(), c.width, c.height, MemoryKind::device),
      got(image.format(), c.width, c.height, MemoryKind::host);
  fillBytes(deviceOut, 0xA5);
  copyImage(image, deviceImage, stream.handle());
  copyImage(plane, devicePlane, stream.handle());
  renderCuda(s, deviceImage, devicePlane, c.disparity, bf, deviceOut, stream.handle());
  copyImage(deviceOut, got, stream.handle());
  stream.synchronize();
  int worst = 0;
  for (int y = 0; y < c.height; ++y)
    for (int x = 0; x < c.width * c.channels; ++x)
      worst = std::max(worst, std::abs(got.view<uint8_t>().row(y)[x] - expected.view<uint8_t>().row(y)[x]));
  EXPECT_LE(worst, 1);
}

using Depths = Case::Depths;
INSTANTIATE_TEST_SUITE_P(Shapes, CudaDof,
                         ::testing::Values(Case{3, 131, 77, 9, 1, false, false}, Case{3, 96, 64, 9, 2, true, true},
                                           Case{1, 50, 90, 4, -2, false, true}, Case{3, 61, 33, 0, 1, false, false},
                                           Case{3, 70, 52, 16, 1, false, true}, Case{1, 33, 17, 31, 1, true, false},
                                           Case{3, 301, 203, 9, 1, false, false, Depths::smooth},
                                           Case{1, 250, 130, 9, -2, false, true, Depths::smooth},
                                           Case{1, 203, 117, 9, 1, false, false, Depths::portrait},
                                           Case{3, 150, 101, 31, 1, false, true, Depths::portrait},
                                           Case{1, 97, 70, 16, 2, true, false, Depths::portrait},
                                           Case{3, 64, 48, 9, 1, false, false, Depths::patches, 0.f}));

}  // namespace
}  // namespace pp::dof
