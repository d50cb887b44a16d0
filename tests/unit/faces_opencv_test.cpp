// face_detect's CPU reference against OpenCV 4's CascadeClassifier (the trusted peer): the pyramid
// resize against cv::resize(INTER_LINEAR_EXACT), the raw windows (minNeighbors 0) and the grouped
// faces (minNeighbors 3) on real pictures of several sizes.
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "tests/opencv_support.hpp"
#include "tests/support.hpp"

namespace pp::faces {
namespace {

TEST(FacesVsOpenCv, PyramidResizeIsBitExact) {
  Image grey = readGreyImage(test::picture("fruits.jpg"));
  for (auto [w, h] : std::vector<std::pair<int, int>>{{465, 437}, {256, 240}, {31, 29}, {511, 479}, {700, 600}}) {
    Image ours({Depth::u8, 1}, w, h, MemoryKind::host);
    resizeExact(grey, ours);
    cv::Mat theirs;
    cv::resize(test::asMat(grey), theirs, cv::Size(w, h), 0, 0, cv::INTER_LINEAR_EXACT);
    EXPECT_EQ(cv::norm(test::asMat(ours), theirs, cv::NORM_INF), 0) << w << "x" << h;
  }
}

double iou(const Box& a, const cv::Rect& b) {
  double x0 = std::max<double>(a.x, b.x), y0 = std::max<double>(a.y, b.y),
         x1 = std::min<double>(a.x + a.w, b.x + b.width), y1 = std::min<double>(a.y + a.h, b.y + b.height);
  double inter = std::max(0.0, x1 - x0) * std::max(0.0, y1 - y0);
  return inter / (a.w * a.h + b.area() - inter);
}

struct Picture {
  const char* name;
  double scale;  // resized first, for more sizes
};

class FacesOnPictures : public ::testing::TestWithParam<Picture> {};

TEST_P(FacesOnPictures, RawWindowsAndGroupedFacesMatchOpenCv) {
  Cascade cascade = loadCascade(defaultCascadePath());
  cv::CascadeClassifier reference(defaultCascadePath());
  ASSERT_FALSE(reference.empty());
  Image picture = readGreyImage(test::picture(GetParam().name));
  if (GetParam().scale != 1) {
    Image scaled({Depth::u8, 1}, static_cast<int>(picture.width() * GetParam().scale),
                 static_cast<int>(picture.height() * GetParam().scale), MemoryKind::host);
    cv::Mat resized;
    cv::resize(test::asMat(picture), resized, test::asMat(scaled).size(), 0, 0, cv::INTER_AREA);
    resized.copyTo(test::asMat(scaled));
    picture = std::move(scaled);
  }
  DetectParams p;
  p.minNeighbors = 0;
  std::vector<Window> ours = detectRawCpu(cascade, picture, p);
  std::vector<cv::Rect> theirs;
  reference.detectMultiScale(test::asMat(picture), theirs, 1.1, 0);
  size_t same = 0;
  std::vector<bool> used(theirs.size(), false);
  for (const Window& w : ours)
    for (size_t i = 0; i < theirs.size(); ++i)
      if (!used[i] && theirs[i] == cv::Rect(w.x, w.y, w.w, w.h)) {
        used[i] = true;
        ++same;
        break;
      }
  RecordProperty("raw_windows", std::to_string(theirs.size()));
  EXPECT_GE(same, theirs.size() * 98 / 100)
      << same << " of " << theirs.size() << " OpenCV windows found (ours: " << ours.size() << ")";
  EXPECT_LE(ours.size(), same + theirs.size() / 50 + 1);

  Detections faces = groupWindows(ours, 3);
  std::vector<cv::Rect> grouped;
  std::vector<int> neighbours;
  reference.detectMultiScale(test::asMat(picture), grouped, neighbours, 1.1, 3);
  ASSERT_EQ(faces.size(), grouped.size());
  if (std::string(GetParam().name) == "messi5.jpg") {
    EXPECT_GE(grouped.size(), 1u) << "Messi's face";
  }
  for (const cv::Rect& r : grouped) {
    double best = 0;
    for (const Box& b : faces) best = std::max(best, iou(b, r));
    EXPECT_GE(best, 0.5) << "OpenCV's face at " << r.x << "," << r.y << " " << r.width << "x" << r.height;
  }
}

INSTANTIATE_TEST_SUITE_P(Pictures, FacesOnPictures,
                         ::testing::Values(Picture{"messi5.jpg", 1}, Picture{"messi5.jpg", 0.61},
                                           Picture{"messi5.jpg", 1.7}, Picture{"starry_night.jpg", 1},
                                           Picture{"baboon.jpg", 0.8}, Picture{"home.jpg", 1}));

}  // namespace
}  // namespace pp::faces
