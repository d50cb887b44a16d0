// CUDA separable filter against the CPU reference: random images, odd sizes, every depth and
// channel count, taps from constant memory and from global memory, outputs poisoned first.
#include "stages/dof/separable.hpp"

#include "tests/support.hpp"

namespace pp::filter {
namespace {

struct Case {
  Format format;
  int taps;
  int width, height;
};

class CudaSeparable : public ::testing::TestWithParam<Case> {};

TEST_P(CudaSeparable, MatchesTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const Case& c = GetParam();
  std::vector<float> taps(static_cast<size_t>(c.taps));
  for (auto& t : taps) t = std::uniform_real_distribution<float>(-0.2f, 1.f)(test::rng());  // not only Gaussians
  SeparableCuda filter(taps);
  for (int round = 0; round < 2; ++round) {
    Image src = test::randomImage(c.format, c.width, c.height);
    Image expected(c.format, c.width, c.height, MemoryKind::host);
    separableCpu(src, expected, taps);
    Image deviceSrc(c.format, c.width, c.height, MemoryKind::device),
        deviceDst(c.format, c.width, c.height, MemoryKind::device);
    Image scratch(Format{Depth::f32, c.format.channels}, c.width, c.height, MemoryKind::device);
    fillBytes(deviceDst, 0xA5);
    Stream stream;
    copyImage(src, deviceSrc, stream.handle());
    filter.apply(deviceSrc, scratch, deviceDst, stream.handle());
    Image got(c.format, c.width, c.height, MemoryKind::host);
    copyImage(deviceDst, got, stream.handle());
    stream.synchronize();
    double worst = 0;
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x)
        for (int ch = 0; ch < c.format.channels; ++ch) {
          double a = sampleAt(got, x, y, ch), b = sampleAt(expected, x, y, ch);
          ASSERT_FALSE(std::isnan(a)) << x << "," << y;
          worst = std::max(
              worst, c.format.depth == Depth::f32 ? std::fabs(a - b) / std::max(1.0, std::fabs(b)) : std::fabs(a - b));
        }
    EXPECT_LE(worst, c.format.depth == Depth::f32 ? 1e-4 : 1.0)
        << toString(c.format) << " " << c.taps << " taps " << c.width << "x" << c.height;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaSeparable,
                         ::testing::Values(Case{{Depth::u8, 3}, 19, 613, 257}, Case{{Depth::u8, 1}, 19, 129, 67},
                                           Case{{Depth::u8, 4}, 63, 200, 90}, Case{{Depth::u16, 1}, 9, 77, 301},
                                           Case{{Depth::f32, 1}, 31, 300, 33}, Case{{Depth::f32, 3}, 1, 31, 7},
                                           Case{{Depth::u8, 3}, 65, 150, 140}, Case{{Depth::f32, 4}, 101, 97, 211}));

TEST(CudaSeparable, ManyFiltersOutgrowTheConstantSlotsAndStillAgree) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  std::vector<std::unique_ptr<SeparableCuda>> filters;
  for (int i = 0; i < 20; ++i) filters.push_back(std::make_unique<SeparableCuda>(gaussianTaps(2 * i + 1)));
  Image src = test::randomImage({Depth::u8, 3}, 64, 48);
  Image deviceSrc(src.format(), 64, 48, MemoryKind::device), deviceDst(src.format(), 64, 48, MemoryKind::device),
      scratch({Depth::f32, 3}, 64, 48, MemoryKind::device);
  Stream stream;
  copyImage(src, deviceSrc, stream.handle());
  for (int i = 0; i < 20; ++i) {
    Image expected(src.format(), 64, 48, MemoryKind::host), got(src.format(), 64, 48, MemoryKind::host);
    separableCpu(src, expected, gaussianTaps(2 * i + 1));
    filters[static_cast<size_t>(i)]->apply(deviceSrc, scratch, deviceDst, stream.handle());
    copyImage(deviceDst, got, stream.handle());
    stream.synchronize();
    auto a = got.view<uint8_t>(), b = expected.view<uint8_t>();
    int worst = 0;
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 64 * 3; ++x) worst = std::max(worst, std::abs(a.row(y)[x] - b.row(y)[x]));
    EXPECT_LE(worst, 1) << "filter " << i;
  }
}

}  // namespace
}  // namespace pp::filter
