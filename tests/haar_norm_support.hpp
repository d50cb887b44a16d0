// The values the exact variance normalisation (cuda/haar_norm.hpp) is checked on, on the CPU and on
// the GPU, and what OpenCV computes for them in double.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/haar_norm.hpp"

namespace pp::faces::test {

// OpenCV's normalisation, in double.
inline float openCvNorm(uint64_t n) { return static_cast<float>(1. / std::sqrt(static_cast<double>(n))); }

// n below 2^46: every n up to `exhaustive`, random ones of every length, and the hard ones: those
// nearest 1 / m^2 for random float midpoints m, where OpenCV's two roundings could decide.
inline std::vector<uint64_t> normInputs(uint64_t exhaustive, int randoms, int nearMidpoints) {
  std::vector<uint64_t> n;
  for (uint64_t v = 1; v <= exhaustive; ++v) n.push_back(v);
  std::mt19937_64 random(46);
  for (int i = 0; i < randoms; ++i) {
    const int bits = 1 + static_cast<int>(random() % 46);
    n.push_back((random() & ((uint64_t{1} << bits) - 1)) | uint64_t{1} << (bits - 1));
  }
  for (int i = 0; i < nearMidpoints; ++i) {
    const uint32_t bits = 0x34000000u + static_cast<uint32_t>(random() % (0x3F800000u - 0x34000000u));
    const double m = (static_cast<double>(norm_detail::floatOfBits(bits)) + norm_detail::floatOfBits(bits + 1)) / 2;
    const double near = std::nearbyint(1 / (m * m));
    if (near < 2 || near >= 0x1p46 - 1) continue;
    for (int d = -1; d <= 1; ++d) n.push_back(static_cast<uint64_t>(near) + d);
  }
  return n;
}

// Areas and norms about OpenCV's flat-window threshold, area * norm < 0.1: the floats around
// 0.1 / area, for normalisation areas up to the largest taken.
struct TenthCase {
  int area;
  float norm;
};
inline std::vector<TenthCase> tenthInputs() {
  std::vector<TenthCase> cases;
  for (int area : {1, 7, 100, 324, 361, 484, kMaxNormArea - 1})
    for (int d = -3000; d <= 3000; ++d)
      cases.push_back({area, norm_detail::floatOfBits(norm_detail::bitsOfFloat(0.1f / static_cast<float>(area)) + d)});
  return cases;
}

}  // namespace pp::faces::test
