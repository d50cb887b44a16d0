// Shared by the CPU and GPU demosaic tests: run a backend into fresh (poisoned) planes.
#pragma once
#include <map>

#include "stages/demosaic/demosaic.hpp"
#include "tests/support.hpp"

namespace pp::test {

using Planes = std::map<std::string, Image>;

// Runs the CPU reference (cuda false) or the CUDA backend, outputs poisoned first; host results.
// `rowPadding` bytes longer output rows: not 16-byte aligned.
inline Planes demosaicPlanes(const demosaic::Settings& s, const Image& raw, const std::vector<std::string>& outputs, bool cuda, size_t rowPadding = 0) {
  return demosaic::runToHost(s, raw, outputs, cuda, 0xA5, rowPadding);
}

using pp::sampleAt;

// PSNR of `a` against `truth` over all channels, `peak` the largest sample value.
inline double psnr(const Image& a, const Image& truth, double peak) {
  double se = 0;
  size_t n = 0;
  for (int y = 0; y < truth.height(); ++y)
    for (int x = 0; x < truth.width(); ++x)
      for (int c = 0; c < truth.format().channels; ++c) {
        double d = sampleAt(a, x, y, c) - sampleAt(truth, x, y, c);
        se += d * d, ++n;
      }
  return se == 0 ? 200.0 : 10 * std::log10(peak * peak / (se / static_cast<double>(n)));
}

}  // namespace pp::test
