// The separable filter's CPU reference against OpenCV (the trusted peer, in tests only).
#include "stages/dof/separable.hpp"

#include <opencv2/imgproc.hpp>

#include "pipeline/image_io.hpp"
#include "tests/opencv_support.hpp"
#include "tests/support.hpp"

namespace pp::filter {
namespace {

using test::asMat;

TEST(Gaussian, TapsMatchOpenCvsKernel) {
  for (int count : {3, 7, 19, 31}) {
    for (double sigma : {0.0, 1.5, 4.0}) {
      auto taps = gaussianTaps(count, sigma);
      cv::Mat reference = cv::getGaussianKernel(count, sigma, CV_64F);
      for (int i = 0; i < count; ++i)
        EXPECT_NEAR(taps[static_cast<size_t>(i)], reference.at<double>(i), 1e-6) << count << " taps, sigma " << sigma;
    }
  }
  EXPECT_THROW(gaussianTaps(4), std::invalid_argument);
}

struct Case {
  Format format;
  int taps;
};

class AgainstOpenCv : public ::testing::TestWithParam<Case> {};

TEST_P(AgainstOpenCv, SepFilter2DWithReplicatedBorder) {
  const Case& c = GetParam();
  Image src = test::randomImage(c.format, 67, 41);  // odd sizes
  Image dst(c.format, src.width(), src.height(), MemoryKind::host);
  fillBytes(dst, 0xA5);
  auto taps = gaussianTaps(c.taps);
  separableCpu(src, dst, taps);
  cv::Mat kernel(1, c.taps, CV_32F, taps.data()), expected;
  cv::sepFilter2D(asMat(src), expected, -1, kernel, kernel, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
  cv::Mat diff;
  cv::absdiff(asMat(dst), expected, diff);
  double worst = 0;
  cv::minMaxLoc(diff.reshape(1), nullptr, &worst);
  EXPECT_LE(worst, c.format.depth == Depth::f32 ? 1e-5 : 1.0) << toString(c.format) << ", " << c.taps << " taps";
}

INSTANTIATE_TEST_SUITE_P(Formats, AgainstOpenCv,
                         ::testing::Values(Case{{Depth::u8, 1}, 19}, Case{{Depth::u8, 3}, 19}, Case{{Depth::u8, 4}, 7},
                                           Case{{Depth::u16, 1}, 31}, Case{{Depth::f32, 1}, 19},
                                           Case{{Depth::f32, 3}, 3}, Case{{Depth::u8, 3}, 1},
                                           Case{{Depth::u8, 1}, 81}));

TEST(Separable, ARealPictureAgainstGaussianBlur) {
  Image picture = readImage(test::picture("fruits.jpg"));
  Image blurred(picture.format(), picture.width(), picture.height(), MemoryKind::host);
  separableCpu(picture, blurred, gaussianTaps(19));
  cv::Mat expected, diff;
  cv::GaussianBlur(asMat(picture), expected, cv::Size(19, 19), 0, 0, cv::BORDER_REPLICATE);
  cv::absdiff(asMat(blurred), expected, diff);
  double worst = 0;
  cv::minMaxLoc(diff.reshape(1), nullptr, &worst);
  EXPECT_LE(worst, 1.0);
}

TEST(Separable, MismatchedImagesAreRefused) {
  Image a(Format{Depth::u8, 3}, 8, 8, MemoryKind::host), b(Format{Depth::u8, 1}, 8, 8, MemoryKind::host);
  EXPECT_THROW(separableCpu(a, b, gaussianTaps(3)), std::invalid_argument);
  EXPECT_THROW(separableCpu(a, a, {0.5f, 0.5f}), std::invalid_argument);
}

}  // namespace
}  // namespace pp::filter
