// Shared by the CPU and GPU demosaic tests: run a backend into fresh (poisoned) planes.
#pragma once
#include <map>

#include "stages/demosaic/demosaic.hpp"
#include "tests/support.hpp"

namespace pp::test {

using Planes = std::map<std::string, Image>;

// Runs the CPU reference (cuda false) or the CUDA backend, outputs poisoned first; host results.
// `rowPadding` bytes longer output rows: not 16-byte aligned.
inline Planes demosaicPlanes(const demosaic::Settings& s, const Image& raw, const std::vector<std::string>& outputs,
                             bool cuda, size_t rowPadding = 0) {
  return demosaic::runToHost(s, raw, outputs, cuda, 0xA5, rowPadding);
}

using pp::sampleAt;

// A u16 plane of samples packed as a camera sends them in `format` (mono10p, mono12p: PFNC bit
// stream, lowest bits first; mono10packed, mono12packed: GigE Vision's pairs in three bytes).
inline Image packRaw(const Image& samples, polar::RawFormat format) {
  using polar::RawFormat;
  Image out({Depth::u8, 1}, demosaic::rawPlaneWidth(format, samples.width()), samples.height(), MemoryKind::host);
  fillBytes(out, 0);
  for (int y = 0; y < samples.height(); ++y) {
    const uint16_t* in = samples.view<uint16_t>().row(y);
    uint8_t* row = out.view<uint8_t>().row(y);
    for (int x = 0; x < samples.width(); ++x) {
      unsigned v = in[x];
      if (format == RawFormat::mono10p || format == RawFormat::mono12p) {
        int bits = format == RawFormat::mono10p ? 10 : 12;
        for (int b = 0; b < bits; ++b)
          if (v >> b & 1)
            row[(bits * x + b) / 8] = static_cast<uint8_t>(row[(bits * x + b) / 8] | 1 << ((bits * x + b) % 8));
      } else {
        int low = format == RawFormat::mono10packed ? 2 : 4;  // bits in the middle byte
        uint8_t* pair = row + x / 2 * 3;
        pair[x & 1 ? 2 : 0] = static_cast<uint8_t>(v >> low);
        pair[1] = static_cast<uint8_t>(pair[1] | (v & ((1u << low) - 1)) << (x & 1 ? 4 : 0));
      }
    }
  }
  return out;
}

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
