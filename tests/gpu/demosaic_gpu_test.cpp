// CUDA demosaic against the CPU reference: fresh random raw frames (odd tile counts, every format
// and mode) and synthetic frames from real pictures, outputs poisoned first.
#include "pipeline/image_io.hpp"
#include "stages/demosaic/synth.hpp"
#include "tests/demosaic_support.hpp"

namespace pp::demosaic {
namespace {

using test::demosaicPlanes;
using test::sampleAt;

#define REQUIRE_GPU() \
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription()

const std::vector<std::string> kAll = outputNames();

// Integers exact (the polarizers' images too), but the visuals within 1; floats within 1e-4
// relative (AoLP modulo pi), normals within 1e-3.
void expectMatch(const test::Planes& gpu, const test::Planes& cpu, const std::string& what) {
  for (const auto& [name, ref] : cpu) {
    const Image& got = gpu.at(name);
    int worst = 0;
    double worstRel = 0;
    for (int y = 0; y < ref.height(); ++y)
      for (int x = 0; x < ref.width(); ++x)
        for (int c = 0; c < ref.format().channels; ++c) {
          double a = sampleAt(got, x, y, c), b = sampleAt(ref, x, y, c);
          if (ref.format().depth != Depth::f32) {
            worst = std::max(worst, static_cast<int>(std::fabs(a - b)));
          } else {
            double d = std::fabs(a - b);
            if (name == "aolp") d = std::min(d, M_PI - d);
            ASSERT_FALSE(std::isnan(a)) << what << " " << name << " NaN at " << x << "," << y;
            worstRel = std::max(worstRel, d / std::max(1.0, std::fabs(b)));
          }
        }
    bool withinOne = name == "aolp_visual" || name == "normals_visual";
    EXPECT_LE(worst, withinOne ? 1 : 0) << what << ": " << name;
    EXPECT_LE(worstRel, name == "normals" ? 1e-3 : 1e-4) << what << ": " << name;
  }
}

struct RandomCase {
  Mosaic mosaic;
  RawFormat format;
  bool full;
  int width, height;
  bool topBits = false;  // depth u8: 8-bit planes from the samples' top 8 bits
};

class RandomRaw : public ::testing::TestWithParam<RandomCase> {};

TEST_P(RandomRaw, CudaMatchesTheCpuReference) {
  REQUIRE_GPU();
  const RandomCase& c = GetParam();
  Settings s;
  s.mosaic = c.mosaic;
  s.format = c.format;
  s.fullResolution = c.full;
  s.layout = {{3, 0, 1, 2}, {polar::G, polar::B, polar::R, polar::G}};  // a non-default angle order and Bayer phase
  s.polarizerCos = std::cos(2 * 0.6f), s.polarizerSin = std::sin(2 * 0.6f);  // and polarizer
  s.refractiveIndex = 1.7f;
  if (c.topBits) s.sampleShift = static_cast<uint8_t>(polar::sampleBits(c.format) - 8);
  int planeWidth = demosaic::rawPlaneWidth(c.format, c.width);
  bool wide = polar::isWide(c.format);
  for (int round = 0; round < 3; ++round) {  // fresh inputs each time
    Image raw = test::randomImage({wide ? Depth::u16 : Depth::u8, 1}, planeWidth, c.height);
    size_t rowPadding = round == 2 ? 4 : 0;
    if (round == 2) {  // input and output rows 4 bytes longer: not 16-byte aligned, so no 16-byte copies
      Image padded(raw.format(), raw.width(), raw.height(), MemoryKind::host, raw.pitch() + 4);
      copyImage(raw, padded, nullptr);
      raw = std::move(padded);
    }
    if (wide && !c.topBits)  // within the format's bits (any byte decodes in the packed formats); cut to 8
                             // bits, the bits above are ignored
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x)
          raw.view<uint16_t>().at(x, y) &= static_cast<uint16_t>(polar::maxValue(c.format));
    expectMatch(demosaicPlanes(s, raw, kAll, true, rowPadding), demosaicPlanes(s, raw, kAll, false),
                "random " + std::to_string(round));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RandomRaw,
    ::testing::Values(RandomCase{Mosaic::rggb, RawFormat::mono8, false, 2448 / 4 + 4 * 7, 4 * 37},
                      // rows that end inside a 16-byte chunk and a tile, and a frame smaller than a tile
                      RandomCase{Mosaic::rggb, RawFormat::mono8, false, 4 * 51, 4 * 23},
                      RandomCase{Mosaic::rggb, RawFormat::mono8, false, 12, 8},
                      RandomCase{Mosaic::rggb, RawFormat::mono16, false, 4 * 33, 4 * 9},
                      RandomCase{Mosaic::rggb, RawFormat::mono12p, false, 4 * 51, 4 * 17},
                      RandomCase{Mosaic::rggb, RawFormat::mono12, false, 12, 8},
                      RandomCase{Mosaic::mono, RawFormat::mono8, false, 2 * 101, 2 * 37},
                      RandomCase{Mosaic::mono, RawFormat::mono8, false, 2 * 4 * 32, 2 * 5},  // whole groups of four
                      RandomCase{Mosaic::mono, RawFormat::mono16, false, 2 * 4 * 9, 2 * 13},
                      RandomCase{Mosaic::mono, RawFormat::mono8, true, 2 * 67, 2 * 19},
                      RandomCase{Mosaic::mono, RawFormat::mono16, true, 2 * 33, 2 * 41},
                      RandomCase{Mosaic::mono, RawFormat::mono12p, false, 2 * 30, 2 * 11},
                      // Mono12p in 12-byte chunks: tiles and groups across the width, and a partial last group
                      RandomCase{Mosaic::rggb, RawFormat::mono12p, false, 2448 / 4 + 4 * 7, 4 * 37},
                      RandomCase{Mosaic::mono, RawFormat::mono12p, false, 2 * 4 * 35 + 2 * 3, 2 * 9},
                      // the other packings and 10-bit samples, read sample by sample
                      RandomCase{Mosaic::rggb, RawFormat::mono10p, false, 4 * 51, 4 * 17},
                      RandomCase{Mosaic::mono, RawFormat::mono10p, false, 4 * 41, 2 * 11},
                      RandomCase{Mosaic::rggb, RawFormat::mono12packed, false, 4 * 51, 4 * 17},
                      RandomCase{Mosaic::mono, RawFormat::mono10packed, true, 2 * 33, 2 * 13},
                      RandomCase{Mosaic::rggb, RawFormat::mono10, false, 4 * 33, 4 * 9},
                      // depth u8: the 8-bit kernels from 16-bit and packed chunks, and sample by sample
                      RandomCase{Mosaic::rggb, RawFormat::mono12p, false, 2448 / 4 + 4 * 7, 4 * 37, true},
                      RandomCase{Mosaic::rggb, RawFormat::mono16, false, 4 * 51, 4 * 17, true},
                      RandomCase{Mosaic::rggb, RawFormat::mono12, false, 4 * 33, 4 * 9, true},
                      RandomCase{Mosaic::rggb, RawFormat::mono10p, false, 4 * 51, 4 * 17, true},
                      RandomCase{Mosaic::rggb, RawFormat::mono12packed, false, 12, 8, true},
                      RandomCase{Mosaic::mono, RawFormat::mono12p, false, 2 * 4 * 35 + 2 * 3, 2 * 9, true},
                      RandomCase{Mosaic::mono, RawFormat::mono12, false, 2 * 4 * 9, 2 * 13, true},
                      RandomCase{Mosaic::mono, RawFormat::mono10packed, true, 2 * 33, 2 * 13, true}));

// The kernels pick their loops by which planes are wanted (the polarizers' images with or without
// max and polarizer, the luminance made by the filtered loop or read again, the normals' loop):
// each choice against the CPU reference, 8 and 16-bit, colour and mono.
TEST(OutputChoices, EveryLoopMatchesTheCpuReference) {
  REQUIRE_GPU();
  const std::vector<std::vector<std::string>> choices = {{"s0", "dolp", "aolp", "min", "polarizer"},
                                                         {"min"},
                                                         {"max", "s1", "s2"},
                                                         {"polarizer", "normals_visual"},
                                                         {"min", "max", "normals", "aolp_visual"},
                                                         {"dolp", "normals"},
                                                         {"s0", "aolp"},
                                                         {"s2", "min", "dolp"}};
  for (Mosaic mosaic : {Mosaic::rggb, Mosaic::mono})
    for (RawFormat format : {RawFormat::mono8, RawFormat::mono16}) {
      Settings s;
      s.mosaic = mosaic;
      s.format = format;
      s.polarizerCos = std::cos(2 * 1.1f), s.polarizerSin = std::sin(2 * 1.1f);
      bool wide = polar::isWide(format);
      Image raw = test::randomImage({wide ? Depth::u16 : Depth::u8, 1}, 4 * 45, 4 * 21);
      for (const auto& choice : choices) {
        std::string what = std::string(mosaic == Mosaic::mono ? "mono " : "colour ") + (wide ? "16-bit" : "8-bit");
        for (const auto& name : choice) what += " " + name;
        expectMatch(demosaicPlanes(s, raw, choice, true), demosaicPlanes(s, raw, choice, false), what);
      }
    }
}

TEST(SyntheticFrames, CudaMatchesTheCpuReferenceOnRealPictures) {
  REQUIRE_GPU();
  for (const std::string& picture : {test::picture("baboon.jpg"), test::picture("fruits.jpg")}) {
    for (Mosaic mosaic : {Mosaic::rggb, Mosaic::mono}) {
      SynthOptions o;
      o.mosaic = mosaic;
      o.sixteenBit = mosaic == Mosaic::mono;
      SynthFrame f = synthesize(readImage(picture), o);
      Settings s;
      s.mosaic = mosaic;
      s.format = o.sixteenBit ? RawFormat::mono16 : RawFormat::mono8;
      expectMatch(demosaicPlanes(s, f.raw, kAll, true), demosaicPlanes(s, f.raw, kAll, false), picture);
    }
  }
}

}  // namespace
}  // namespace pp::demosaic
