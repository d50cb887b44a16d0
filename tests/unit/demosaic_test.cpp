// The CPU reference against synthetic truth, and the stage's bad-input errors.
#include "stages/demosaic/synth.hpp"

#include "pipeline/image_io.hpp"
#include "tests/demosaic_support.hpp"

namespace pp::demosaic {
namespace {

using test::demosaicPlanes;
using test::psnr;
using test::sampleAt;

const std::string kPictures[] = {test::picture("baboon.jpg"), test::picture("fruits.jpg"), test::picture("home.jpg")};

// Bilinear Bayer demosaic of one angle's sub-image: the baseline MHC must beat.
Image bilinearAngle(const Settings& s, const Image& raw, int k) {
  int w = raw.width() / 2, h = raw.height() / 2, ox = 0, oy = 0;
  s.layout.offsetOf(k, ox, oy);
  auto sub = [&](int x, int y) {
    return raw.view<uint8_t>().at(2 * polar::reflect101(x, w) + ox, 2 * polar::reflect101(y, h) + oy);
  };
  Image out({Depth::u8, 3}, w, h, MemoryKind::host);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        int sum = 0, n = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            if (s.layout.colour(x + dx, y + dy) == c) sum += sub(x + dx, y + dy), ++n;  // same-colour neighbours
        out.view<uint8_t>().at(x, y, c) = static_cast<uint8_t>((sum + n / 2) / n);
      }
  return out;
}

// Mean absolute difference of two angle fields, modulo pi.
double angleError(const Image& a, const Image& truth, int border) {
  double sum = 0;
  size_t n = 0;
  for (int y = border; y < truth.height() - border; ++y)
    for (int x = border; x < truth.width() - border; ++x) {
      double d = std::fabs(sampleAt(a, x, y, 0) - sampleAt(truth, x, y, 0));
      sum += std::min(d, M_PI - d), ++n;
    }
  return sum / static_cast<double>(n);
}

double meanAbs(const Image& a, const Image& truth) {
  double sum = 0;
  for (int y = 0; y < truth.height(); ++y)
    for (int x = 0; x < truth.width(); ++x) sum += std::fabs(sampleAt(a, x, y, 0) - sampleAt(truth, x, y, 0));
  return sum / (static_cast<double>(truth.width()) * truth.height());
}

class ColourTruth : public ::testing::TestWithParam<std::string> {};

TEST_P(ColourTruth, MhcBeatsBilinearAndStokesAreClose) {
  SynthOptions o;
  SynthFrame f = synthesize(readImage(GetParam()), o);
  Settings s;
  auto planes = demosaicPlanes(s, f.raw, {"angles", "s0", "dolp", "aolp"}, false);
  for (int k = 0; k < 4; ++k) {
    double mhc = psnr(planes.at(angleName(k)), f.angle[k], 255),
           bilinear = psnr(bilinearAngle(s, f.raw, k), f.angle[k], 255);
    RecordProperty(std::string(angleName(k)) + "_psnr_mhc_vs_bilinear",
                   std::to_string(mhc) + " / " + std::to_string(bilinear));
    // Measured (baboon, fruits, home): MHC 31.8-44.3 dB, 3.2-5.5 dB above bilinear on every angle.
    EXPECT_GT(mhc, bilinear + 2.0) << angleName(k) << ": MHC " << mhc << " dB vs bilinear " << bilinear << " dB";
    EXPECT_GT(mhc, 30.0) << angleName(k);
  }
  // S0/2 of the four demosaiced angles against the truth S0/2, per channel, from the truth angles.
  Image truthS0({Depth::u8, 3}, f.angle[0].width(), f.angle[0].height(), MemoryKind::host);
  for (int y = 0; y < truthS0.height(); ++y)
    for (int x = 0; x < truthS0.width(); ++x)
      for (int c = 0; c < 3; ++c) {
        int sum = 0;
        for (int k = 0; k < 4; ++k) sum += f.angle[k].view<uint8_t>().at(x, y, c);
        truthS0.view<uint8_t>().at(x, y, c) = static_cast<uint8_t>((sum + 2) >> 2);
      }
  // Measured: S0 32.6-43.5 dB; mean DoLP error 0.004-0.011, mean AoLP error 0.006-0.016 rad (the
  // fruits' dark background amplifies rounding). Bounds: about twice the worst measured.
  EXPECT_GT(psnr(planes.at("s0"), truthS0, 255), 30.0);
  RecordProperty("dolp_mean_abs_error", std::to_string(meanAbs(planes.at("dolp"), f.dolp)));
  RecordProperty("aolp_mean_abs_error_rad", std::to_string(angleError(planes.at("aolp"), f.aolp, 2)));
  RecordProperty("s0_psnr", std::to_string(psnr(planes.at("s0"), truthS0, 255)));
  EXPECT_LT(meanAbs(planes.at("dolp"), f.dolp), 0.02);
  EXPECT_LT(angleError(planes.at("aolp"), f.aolp, 2), 0.03);
}

INSTANTIATE_TEST_SUITE_P(Pictures, ColourTruth, ::testing::ValuesIn(kPictures), [](const auto& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  return name;
});

TEST(MonoTruth, SuperPixelsReproduceTheAnglesExactly) {
  SynthOptions o;
  o.mosaic = Mosaic::mono;
  o.aolp = "radial";
  SynthFrame f = synthesize(readImage(kPictures[1]), o);
  Settings s;
  s.mosaic = Mosaic::mono;
  auto planes = demosaicPlanes(s, f.raw, {"angles", "dolp", "aolp"}, false);
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(test::samePixels(planes.at(angleName(k)), f.angle[k])) << angleName(k);
  // Only rounding to 8 bits separates the result from the truth; dark pixels amplify it.
  EXPECT_LT(meanAbs(planes.at("dolp"), f.dolp), 0.02);
  EXPECT_LT(angleError(planes.at("aolp"), f.aolp, 0), 0.03);
}

TEST(MonoTruth, FullResolutionInterpolatesEachAngle) {
  SynthOptions o;
  o.mosaic = Mosaic::mono;
  o.dolp = "0";  // unpolarized: every angle sees the scene, so the full-res angles track the picture
  SynthFrame f = synthesize(readImage(kPictures[0]), o);
  Settings s;
  s.mosaic = Mosaic::mono;
  s.fullResolution = true;
  auto planes = demosaicPlanes(s, f.raw, {"angles", "s0"}, false);
  EXPECT_EQ(planes.at("angle_0").width(), f.raw.width());
  // Each angle, sampled back at its own sites, is exact there.
  int ox = 0, oy = 0;
  s.layout.offsetOf(0, ox, oy);
  for (int y = 0; y < f.angle[0].height(); ++y)
    for (int x = 0; x < f.angle[0].width(); ++x)
      ASSERT_EQ(planes.at("angle_0").view<uint8_t>().at(2 * x + ox, 2 * y + oy), f.angle[0].view<uint8_t>().at(x, y))
          << x << "," << y;
}

// Each packing decodes to the samples it packed: the demosaic of the packed plane equals that of
// the same samples unpacked, colour and mono.
TEST(RawFormats, PackedFormatsGiveTheSameResultAsUnpacked) {
  int w = 24, h = 12;
  for (RawFormat packing : {RawFormat::mono10p, RawFormat::mono12p, RawFormat::mono10packed, RawFormat::mono12packed}) {
    SCOPED_TRACE(rawFormatName(packing));
    Settings unpacked, packed;
    unpacked.format = polar::maxValue(packing) == 1023 ? RawFormat::mono10 : RawFormat::mono12;
    packed.format = packing;
    Image samples({Depth::u16, 1}, w, h, MemoryKind::host);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        samples.view<uint16_t>().at(x, y) = static_cast<uint16_t>(test::rng()() % (polar::maxValue(packing) + 1));
    Image plane = test::packRaw(samples, packing);
    EXPECT_EQ(rawPixelWidth(packing, plane.width()), w);
    for (Mosaic mosaic : {Mosaic::rggb, Mosaic::mono}) {
      unpacked.mosaic = packed.mosaic = mosaic;
      auto a = demosaicPlanes(unpacked, samples, {"angles", "aolp_visual"}, false),
           b = demosaicPlanes(packed, plane, {"angles", "aolp_visual"}, false);
      for (const auto& [name, img] : a) EXPECT_TRUE(test::samePixels(img, b.at(name))) << name;
      double maxSample = 0;
      for (int y = 0; y < a.at("angle_0").height(); ++y)
        for (int x = 0; x < a.at("angle_0").width(); ++x)
          maxSample = std::max(maxSample, sampleAt(a.at("angle_0"), x, y, 0));
      EXPECT_LE(maxSample, polar::maxValue(packing)) << "results stay within the format's bits";
    }
  }
  Settings tenBit;
  tenBit.format = RawFormat::mono10p;
  int outW = 0, outH = 0;
  EXPECT_NE(checkRawSize(tenBit, 31, 12, outW, outH).find("multiple of 5"), std::string::npos);
  EXPECT_EQ(checkRawSize(tenBit, 30, 12, outW, outH), "");
  EXPECT_EQ(outW, 12) << "30 bytes of Mono10p are 24 pixels";
}

// depth u8: a 10, 12 or 16-bit frame (any packing) gives, in 8-bit planes, exactly what the
// same frame's top 8 bits give as mono8 (the camera's Mono8), every output, colour and mono.
TEST(RawFormats, DepthU8IsTheTopEightBitsDemosaicedAsMono8) {
  int w = 48, h = 24;
  for (RawFormat format : {RawFormat::mono10, RawFormat::mono12, RawFormat::mono16, RawFormat::mono10p,
                           RawFormat::mono12p, RawFormat::mono10packed, RawFormat::mono12packed}) {
    SCOPED_TRACE(rawFormatName(format));
    DemosaicParams p;
    p.pixel_format = rawFormatName(format);
    p.depth = "u8";
    Settings cut = settingsOf(p), eight = cut;
    EXPECT_EQ(cut.sampleShift, polar::sampleBits(format) - 8);
    eight.format = RawFormat::mono8, eight.sampleShift = 0;
    Image samples({Depth::u16, 1}, w, h, MemoryKind::host), top({Depth::u8, 1}, w, h, MemoryKind::host);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        auto v = static_cast<uint16_t>(test::rng()() % (polar::maxValue(format) + 1));
        samples.view<uint16_t>().at(x, y) = v;
        top.view<uint8_t>().at(x, y) = static_cast<uint8_t>(v >> cut.sampleShift);
      }
    Image raw = polar::isPacked(format) ? test::packRaw(samples, format) : std::move(samples);
    for (auto [mosaic, full] : {std::pair{Mosaic::rggb, false}, {Mosaic::mono, false}, {Mosaic::mono, true}}) {
      cut.mosaic = eight.mosaic = mosaic, cut.fullResolution = eight.fullResolution = full;
      auto a = demosaicPlanes(cut, raw, outputNames(), false), b = demosaicPlanes(eight, top, outputNames(), false);
      ASSERT_EQ(a.at("s0").format().depth, Depth::u8);
      for (const auto& [name, img] : b) EXPECT_TRUE(test::samePixels(a.at(name), img)) << name;
    }
  }
  DemosaicParams keep;
  keep.pixel_format = "mono12p";
  EXPECT_EQ(planesFor(settingsOf(keep), {"s0"}).at(0).format.depth, Depth::u16) << "depth keep: every bit";
}

TEST(BadInput, RawSizesThatDoNotFitThePeriod) {
  Settings colour, mono;
  mono.mosaic = Mosaic::mono;
  int w, h;
  EXPECT_NE(checkRawSize(colour, 2446, 2048, w, h).find("multiples of 4"), std::string::npos);
  EXPECT_NE(checkRawSize(mono, 101, 100, w, h).find("multiples of 2"), std::string::npos);
  EXPECT_NE(checkRawSize(mono, 4, 4, w, h).find("at least 6x6"), std::string::npos);
  EXPECT_EQ(checkRawSize(colour, 2448, 2048, w, h), "");
  EXPECT_EQ(w, 1224);
  EXPECT_THROW(planesFor(colour, {"angels"}), std::invalid_argument);
  Image sixteen({Depth::u16, 1}, 8, 8, MemoryKind::host);
  EXPECT_THROW(rawBytes(sixteen, RawFormat::mono8), std::invalid_argument) << "a 16-bit plane is not mono8";
}

}  // namespace
}  // namespace pp::demosaic
