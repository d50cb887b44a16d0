// Makes tests/data/stereo/chessboard-calibration.yml from the chessboard stereo set in Debian's
// opencv-doc (examples/data/left01..14.jpg and right01..14.jpg, left10 missing; 9x6 inner corners) with OpenCV's
// stereoCalibrate and stereoRectify, as OpenCV's samples/cpp/stereo_calib.cpp does. Built as the
// target make_stereo_calibration (tests with OpenCV only); run it to regenerate the file:
//   build/bin/make_stereo_calibration /usr/share/doc/opencv-doc/examples/data
//   tests/data/stereo/chessboard-calibration.yml
#include <cstdio>
#include <string>
#include <vector>

#include <opencv2/calib3d.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATA_DIR OUT.yml\n", argv[0]);
    return 2;
  }
  const cv::Size board(9, 6);
  std::vector<std::vector<cv::Point2f>> corners[2];
  std::vector<std::vector<cv::Point3f>> objects;
  cv::Size size;
  for (int i = 1; i <= 14; ++i) {
    char name[2][64];
    std::snprintf(name[0], sizeof name[0], "/left%02d.jpg", i);
    std::snprintf(name[1], sizeof name[1], "/right%02d.jpg", i);
    std::vector<cv::Point2f> found[2];
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
      cv::Mat image = cv::imread(std::string(argv[1]) + name[k], cv::IMREAD_GRAYSCALE);
      ok = !image.empty();  // Debian's set has no left10.jpg
      if (!ok) break;
      size = image.size();
      ok = cv::findChessboardCorners(image, board, found[k],
                                     cv::CALIB_CB_ADAPTIVE_THRESH | cv::CALIB_CB_NORMALIZE_IMAGE);
      if (ok)
        cv::cornerSubPix(image, found[k], cv::Size(11, 11), cv::Size(-1, -1),
                         cv::TermCriteria(cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 30, 0.01));
    }
    if (!ok) continue;
    corners[0].push_back(found[0]);
    corners[1].push_back(found[1]);
    std::vector<cv::Point3f> object;
    for (int y = 0; y < board.height; ++y)
      for (int x = 0; x < board.width; ++x) object.emplace_back(static_cast<float>(x), static_cast<float>(y), 0.f);
    objects.push_back(object);
  }
  cv::Mat m1 = cv::initCameraMatrix2D(objects, corners[0], size, 0),
          m2 = cv::initCameraMatrix2D(objects, corners[1], size, 0);
  cv::Mat d1, d2, r, t, e, f;
  double rms =
      cv::stereoCalibrate(objects, corners[0], corners[1], m1, d1, m2, d2, size, r, t, e, f,
                          cv::CALIB_FIX_ASPECT_RATIO | cv::CALIB_ZERO_TANGENT_DIST | cv::CALIB_USE_INTRINSIC_GUESS |
                              cv::CALIB_SAME_FOCAL_LENGTH | cv::CALIB_RATIONAL_MODEL | cv::CALIB_FIX_K3 |
                              cv::CALIB_FIX_K4 | cv::CALIB_FIX_K5,
                          cv::TermCriteria(cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 100, 1e-5));
  cv::Mat r1, r2, p1, p2, q;
  cv::stereoRectify(m1, d1, m2, d2, size, r, t, r1, r2, p1, p2, q, cv::CALIB_ZERO_DISPARITY, 1, size);
  cv::FileStorage out(argv[2], cv::FileStorage::WRITE);
  out << "image_width" << size.width << "image_height" << size.height << "pairs" << static_cast<int>(objects.size())
      << "rms" << rms;
  out << "M1" << m1 << "D1" << d1 << "M2" << m2 << "D2" << d2 << "R" << r << "T" << t << "R1" << r1 << "R2" << r2
      << "P1" << p1 << "P2" << p2 << "Q" << q;
  std::printf("%d pairs, RMS reprojection error %.3f px -> %s\n", static_cast<int>(objects.size()), rms, argv[2]);
  return 0;
}
