// Shared by the CPU and GPU demosaic tests: run a backend into fresh (poisoned) planes.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
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

// A raw mosaic (mono16, or u8 for mono8) of what each pixel's polarizer passes, given per sub-image
// pixel (x, y), colour channel c (0 on mono sensors) and polarizer angle t in radians; rounded.
inline Image mosaicOf(const demosaic::Settings& s, int subW, int subH,
                      const std::function<double(int x, int y, int c, double t)>& passes) {
  bool wide = s.format != polar::RawFormat::mono8;
  Image raw({wide ? Depth::u16 : Depth::u8, 1}, 2 * subW, 2 * subH, MemoryKind::host);
  double maxv = polar::maxValue(s.format);
  for (int y = 0; y < subH; ++y)
    for (int x = 0; x < subW; ++x)
      for (int k = 0; k < 4; ++k) {
        int ox = 0, oy = 0;
        s.layout.offsetOf(k, ox, oy);
        int c = s.mosaic == polar::Mosaic::rggb ? s.layout.colour(x, y) : 0;
        double v = std::clamp(std::round(passes(x, y, c, polar::kAngles[k] * M_PI / 180)), 0.0, maxv);
        if (wide)
          raw.view<uint16_t>().at(2 * x + ox, 2 * y + oy) = static_cast<uint16_t>(v);
        else
          raw.view<uint8_t>().at(2 * x + ox, 2 * y + oy) = static_cast<uint8_t>(v);
      }
  return raw;
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
