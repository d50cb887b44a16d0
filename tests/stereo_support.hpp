// Stereo test helpers: the Aloe pair's score against its ground truth, and a textured pair with a
// known shift.
#pragma once
#include <cmath>

#include "cuda/sgm_types.hpp"
#include "pipeline/image_io.hpp"
#include "tests/support.hpp"

namespace pp::test {

inline std::string stereoData(const std::string& name) { return dataFile("stereo/" + name); }

// Over the pixels with known ground truth (non-zero), invalid outputs counted as errors.
struct StereoScore {
  double density = 0, bad2 = 0;  // percent
};
inline StereoScore scoreAgainst(const Image& disparity, const Image& truth) {
  size_t known = 0, valid = 0, bad = 0;
  for (int y = 0; y < truth.height(); ++y)
    for (int x = 0; x < truth.width(); ++x) {
      double gt = sampleAt(truth, x, y, 0);
      if (gt == 0) continue;
      ++known;
      uint16_t d = disparity.view<uint16_t>().at(x, y);
      if (d == stereo::kInvalidDisparity) {
        ++bad;
        continue;
      }
      ++valid;
      if (std::fabs(d / 16.0 - gt) > 2.0) ++bad;
    }
  return {100.0 * valid / known, 100.0 * bad / known};
}

// A random texture (blobs of 3x3 pixels, so census has structure) and the same seen `shift` pixels
// further right: right(x) = left(x + shift), i.e. disparity `shift` everywhere.
inline std::pair<Image, Image> shiftedPair(int width, int height, int shift) {
  Image wide = randomImage({Depth::u8, 1}, (width + shift + 2) / 3 + 1, height / 3 + 1);
  Image left({Depth::u8, 1}, width, height, MemoryKind::host), right({Depth::u8, 1}, width, height, MemoryKind::host);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      left.view<uint8_t>().at(x, y) = wide.view<uint8_t>().at(x / 3, y / 3);
      right.view<uint8_t>().at(x, y) = wide.view<uint8_t>().at((x + shift) / 3, y / 3);
    }
  return {std::move(left), std::move(right)};
}

}  // namespace pp::test
