// CUDA face detection against the CPU reference: the same raw windows (minNeighbors 0), in the
// same order, and so the same grouped faces, on real pictures of several sizes and on noise (the
// stage sums are exact on both sides), also with more windows than the first read takes and with
// a fine pyramid; a picture smaller than the window gives nothing and no error; a cascade whose
// sums cannot be exact in 64-bit integers, a window too large for the exact variance
// normalisation, or a pyramid of more levels than the detector takes, is refused by name.
#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "tests/support.hpp"

namespace pp::faces {
namespace {

std::vector<Window> onGpu(const Cascade& c, const DetectParams& p, const Image& grey) {
  Stream stream;
  Image device(grey.format(), grey.width(), grey.height(), MemoryKind::device);
  copyImage(grey, device, stream.handle());
  FaceDetectorCuda detector(c, p, grey.width(), grey.height());
  detector.detectRaw(device, stream.handle());  // twice: buffers are reused
  return detector.detectRaw(device, stream.handle());
}

Image scaled(const Image& picture, double factor) {
  Image out({Depth::u8, 1}, static_cast<int>(picture.width() * factor), static_cast<int>(picture.height() * factor),
            MemoryKind::host);
  resizeExact(picture, out);
  return out;
}

TEST(CudaFaces, MatchTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  Image messi = readGreyImage(test::picture("messi5.jpg"));
  std::vector<std::pair<std::string, Image>> pictures;
  pictures.emplace_back("messi5", readGreyImage(test::picture("messi5.jpg")));
  pictures.emplace_back("messi5 x1.7", scaled(messi, 1.7));
  pictures.emplace_back("messi5 x0.5", scaled(messi, 0.5));
  pictures.emplace_back("starry_night", readGreyImage(test::picture("starry_night.jpg")));
  pictures.emplace_back("baboon", readGreyImage(test::picture("baboon.jpg")));
  pictures.emplace_back("noise", test::randomImage({Depth::u8, 1}, 333, 217));
  DetectParams raw;
  raw.minNeighbors = 0;
  for (const auto& [name, picture] : pictures) {
    std::vector<Window> want = detectRawCpu(cascade, picture, raw), got = onGpu(cascade, raw, picture);
    size_t same = 0;
    for (const Window& w : got) same += std::find(want.begin(), want.end(), w) != want.end();
    EXPECT_TRUE(got == want) << name << ": " << got.size() << " windows on the GPU, " << want.size() << " on the CPU, "
                             << same << " of them the same";
  }
  EXPECT_GE(groupWindows(onGpu(cascade, raw, pictures[0].second), 3).size(), 1u) << "Messi's face";
  EXPECT_TRUE(onGpu(cascade, raw, test::randomImage({Depth::u8, 1}, 20, 30)).empty());
}

// The cascade's first stage alone passes thousands of windows of a real picture: more than the
// detector reads back with their count, so the rest come in a second read, in the same order.
TEST(CudaFaces, MoreWindowsThanTheFirstReadMatchTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  cascade.stages.resize(1);
  Image messi = readGreyImage(test::picture("messi5.jpg"));
  DetectParams raw;
  raw.minNeighbors = 0;
  std::vector<Window> want = detectRawCpu(cascade, messi, raw), got = onGpu(cascade, raw, messi);
  ASSERT_GT(want.size(), FaceDetectorCuda::kWindowsReadWithCount);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
}

// A fine pyramid (scale factor 1.02: 74 levels of Messi at 164x102, more than the 64 the detector
// once kept, dropping the rest without a word) gives the CPU reference's windows; one finer than
// the detector takes (1.001: 1453 levels) is refused by name.
TEST(CudaFaces, FinePyramidsMatchTheCpuReferenceOrAreRefused) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  Image small = scaled(readGreyImage(test::picture("messi5.jpg")), 0.3);
  DetectParams fine;
  fine.minNeighbors = 0;
  fine.scaleFactor = 1.02;
  ASSERT_GT(pyramid(cascade, small.width(), small.height(), fine).size(), 64u);
  std::vector<Window> want = detectRawCpu(cascade, small, fine), got = onGpu(cascade, fine, small);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  fine.scaleFactor = 1.001;
  try {
    FaceDetectorCuda detector(cascade, fine, small.width(), small.height());
    ADD_FAILURE() << "expected an error for a pyramid of more than 256 levels";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scale_factor"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backend cpu"), std::string::npos) << e.what();
  }
}

// A leaf value of 2^-60 beside ones near 1 needs more than 53 bits: OpenCV's double sums would
// round, integer sums would not, so the CUDA backend refuses the cascade instead of differing.
TEST(CudaFaces, RefuseACascadeWhoseSumsWouldRound) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  cascade.stumps[3].left = 0x1p-60f;
  try {
    FaceDetectorCuda(cascade, DetectParams{}, 64, 64);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("53 bits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backend cpu"), std::string::npos) << e.what();
  }
}

// The exact variance normalisation takes windows of fewer than 2^14 pixels inside their border.
TEST(CudaFaces, RefuseAWindowTooLargeForTheExactNormalisation) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  cascade.width = cascade.height = 130;
  try {
    FaceDetectorCuda(cascade, DetectParams{}, 256, 256);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("130x130 window is too large"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backend cpu"), std::string::npos) << e.what();
  }
}

// A colour S0 is made grey the same way on both sides.
TEST(CudaFaces, ColourPicturesMatchTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Cascade cascade = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  Image rgb = readImage(test::picture("messi5.jpg"));
  ASSERT_EQ(rgb.format().channels, 3);
  DetectParams p;
  Stream stream;
  Image device(rgb.format(), rgb.width(), rgb.height(), MemoryKind::device);
  copyImage(rgb, device, stream.handle());
  Detections want = detectCpu(cascade, rgb, p),
             got = FaceDetectorCuda(cascade, p, rgb.width(), rgb.height()).detect(device, stream.handle());
  ASSERT_EQ(want.size(), got.size());
  ASSERT_GE(want.size(), 1u);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(want[i].x == got[i].x && want[i].y == got[i].y && want[i].w == got[i].w) << i;
}

}  // namespace
}  // namespace pp::faces
