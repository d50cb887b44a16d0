// rectify's CPU reference against OpenCV: the calibration reader against cv::FileStorage, the maps
// against initUndistortRectifyMap, and the remap against cv::remap (bilinear, constant border) on
// the real chessboard pair.
#include <opencv2/calib3d.hpp>
#include <opencv2/imgproc.hpp>

#include "stages/stereo/calibration.hpp"
#include "tests/opencv_support.hpp"
#include "tests/stereo_support.hpp"

namespace pp::stereo {
namespace {

TEST(RectifyVsOpenCv, MapsAndRemapMatch) {
  std::string path = test::stereoData("chessboard-calibration.yml");
  StereoCalibration c = loadCalibration(path);
  cv::FileStorage fs(path, cv::FileStorage::READ);
  ASSERT_TRUE(fs.isOpened());
  const char* sides[2][4] = {{"M1", "D1", "R1", "P1"}, {"M2", "D2", "R2", "P2"}};
  const char* pictures[2] = {"chessboard/left/01.jpg", "chessboard/right/01.jpg"};
  for (int side = 0; side < 2; ++side) {
    cv::Mat m, d, r, p;
    fs[sides[side][0]] >> m;
    fs[sides[side][1]] >> d;
    fs[sides[side][2]] >> r;
    fs[sides[side][3]] >> p;
    const Camera& camera = side == 0 ? c.left : c.right;
    for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(camera.p[i], p.at<double>(i / 4, i % 4)) << sides[side][3];

    cv::Mat mapX, mapY;
    cv::initUndistortRectifyMap(m, d, r, p, cv::Size(640, 480), CV_32FC1, mapX, mapY);
    Image ours = rectifyMap(camera, 640, 480);
    double worst = 0;
    for (int y = 0; y < 480; ++y)
      for (int x = 0; x < 640; ++x) {
        worst = std::max(worst, std::fabs(static_cast<double>(ours.view<float>().at(x, y, 0)) - mapX.at<float>(y, x)));
        worst = std::max(worst, std::fabs(static_cast<double>(ours.view<float>().at(x, y, 1)) - mapY.at<float>(y, x)));
      }
    EXPECT_LT(worst, 1e-3) << sides[side][0] << ": map coordinates";

    // Through OpenCV's own maps, so the remap itself is compared: the same fixed point, so the same pixels.
    Image picture = readGreyImage(test::stereoData(pictures[side]));
    Image map({Depth::f32, 2}, 640, 480, MemoryKind::host);
    cv::merge(std::vector<cv::Mat>{mapX, mapY}, test::asMat(map));
    Image got({Depth::u8, 1}, 640, 480, MemoryKind::host);
    remapCpu(picture, map, got);
    cv::Mat want;
    cv::remap(test::asMat(picture), want, mapX, mapY, cv::INTER_LINEAR, cv::BORDER_CONSTANT, 0);
    int differ = 0, biggest = 0;
    for (int y = 0; y < 480; ++y)
      for (int x = 0; x < 640; ++x) {
        int diff = std::abs(got.view<uint8_t>().at(x, y) - want.at<uint8_t>(y, x));
        differ += diff != 0;
        biggest = std::max(biggest, diff);
      }
    EXPECT_EQ(differ, 0) << pictures[side] << ": largest difference " << biggest;
  }
}

}  // namespace
}  // namespace pp::stereo
