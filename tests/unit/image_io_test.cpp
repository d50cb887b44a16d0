#include "pipeline/image_io.hpp"

#include <fstream>

#include "tests/support.hpp"

namespace pp {
namespace {

using test::randomImage;
using test::samePixels;
using test::TempDir;

struct RoundTrip {
  const char* file;
  Format format;
};

class ImageRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(ImageRoundTrip, WritesAndReadsBackTheSamePixels) {
  TempDir dir;
  const RoundTrip& c = GetParam();
  Image original = randomImage(c.format, 37, 23);  // odd sizes catch pitch mistakes
  std::string path = dir / c.file;
  writeImage(path, original);
  ImageFileInfo info = probeImage(path);
  EXPECT_EQ(info.format, c.format);
  EXPECT_EQ(info.width, 37);
  EXPECT_EQ(info.height, 23);
  EXPECT_TRUE(samePixels(readImage(path), original));
}

INSTANTIATE_TEST_SUITE_P(Formats, ImageRoundTrip,
                         ::testing::Values(RoundTrip{"g8.png", {Depth::u8, 1}}, RoundTrip{"g16.png", {Depth::u16, 1}},
                                           RoundTrip{"rgb8.png", {Depth::u8, 3}},
                                           RoundTrip{"rgba8.png", {Depth::u8, 4}}, RoundTrip{"g8.pgm", {Depth::u8, 1}},
                                           RoundTrip{"g16.pgm", {Depth::u16, 1}}, RoundTrip{"rgb8.ppm", {Depth::u8, 3}},
                                           RoundTrip{"f.pfm", {Depth::f32, 1}}, RoundTrip{"rgbf.pfm", {Depth::f32, 3}}),
                         [](const ::testing::TestParamInfo<RoundTrip>& info) {
                           std::string name = info.param.file;
                           name[name.find('.')] = '_';
                           return name;
                         });

TEST(ImageIo, PfmIsBottomUpAsTheFormatSays) {
  TempDir dir;
  Image image(Format{Depth::f32, 1}, 1, 2, MemoryKind::host);
  image.view<float>().at(0, 0) = 1.0f;  // top row
  image.view<float>().at(0, 1) = 2.0f;
  writeImage(dir / "t.pfm", image);
  std::ifstream in(dir / "t.pfm", std::ios::binary);
  std::string magic;
  int w, h;
  double scale;
  in >> magic >> w >> h >> scale;
  in.get();
  float first;
  in.read(reinterpret_cast<char*>(&first), 4);
  EXPECT_EQ(first, 2.0f);  // the file starts with the bottom row
}

TEST(ImageIo, ReadsARealJpeg) {
  Image aloe = readImage((test::sourceDir() / "tests/data/stereo/aloeL.jpg").string());
  EXPECT_EQ(aloe.width(), 1282);
  EXPECT_EQ(aloe.height(), 1110);
  EXPECT_EQ(aloe.format(), (Format{Depth::u8, 3}));
}

TEST(ImageIo, ErrorsNameTheFileAndTheProblem) {
  TempDir dir;
  std::ofstream(dir / "garbage.png") << "not a png";
  std::ofstream(dir / "short.pfm") << "Pf\n4 4\n-1.0\n";
  EXPECT_THROW(
      {
        try {
          readImage(dir / "garbage.png");
        } catch (const ImageFileError& e) {
          EXPECT_NE(std::string(e.what()).find("garbage.png"), std::string::npos) << e.what();
          throw;
        }
      },
      ImageFileError);
  try {
    readImage(dir / "short.pfm");
    FAIL() << "a truncated PFM was read";
  } catch (const ImageFileError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  try {
    readImage(dir / "missing.png");
    FAIL() << "a missing file was read";
  } catch (const ImageFileError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.png"), std::string::npos) << e.what();
  }
  Image f(Format{Depth::f32, 1}, 4, 4, MemoryKind::host);
  EXPECT_THROW(writeImage(dir / "f.png", f), ImageFileError);
  EXPECT_THROW(writeImage(dir / "f.bmp", f), ImageFileError);
}

TEST(ImageIo, ReadIntoRejectsAnotherSize) {
  TempDir dir;
  writeImage(dir / "a.png", randomImage({Depth::u8, 1}, 8, 8));
  Image wrong(Format{Depth::u8, 1}, 9, 8, MemoryKind::host);
  EXPECT_THROW(readImageInto(dir / "a.png", wrong), ImageFileError);
}

}  // namespace
}  // namespace pp
