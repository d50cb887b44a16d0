// Shared by the CPU and GPU demosaic tests: run a backend into fresh (poisoned) planes.
#pragma once
#include <map>

#include "stages/demosaic/demosaic.hpp"
#include "tests/support.hpp"

namespace pp::test {

using Planes = std::map<std::string, Image>;

// Runs the CPU reference (cuda false) or the CUDA backend, outputs poisoned first; host results.
inline Planes demosaicPlanes(const demosaic::Settings& s, const Image& raw, const std::vector<std::string>& outputs, bool cuda) {
  int w = 0, h = 0;
  std::string problem = demosaic::checkRawSize(s, demosaic::rawPixelWidth(s.format, raw.width()), raw.height(), w, h);
  EXPECT_EQ(problem, "");
  MemoryKind memory = cuda ? MemoryKind::device : MemoryKind::host;
  Planes planes, host;
  std::map<std::string, Image*> views;
  for (const auto& p : demosaic::planesFor(s, outputs)) {
    Image& img = planes.emplace(p.name, Image(p.format, w, h, memory)).first->second;
    fillBytes(img, 0xA5);  // poison: an unwritten pixel shows
    views[p.name] = &img;
  }
  Stream stream;
  if (cuda) {
    Image deviceRaw(raw.format(), raw.width(), raw.height(), MemoryKind::device);
    copyImage(raw, deviceRaw, stream.handle());
    demosaic::run(s, deviceRaw, views, true, stream.handle());
    stream.synchronize();
  } else {
    demosaic::run(s, raw, views, false, nullptr);
  }
  for (auto& [name, img] : planes) {
    Image copy(img.format(), img.width(), img.height(), MemoryKind::host);
    copyImage(img, copy, stream.handle());
    stream.synchronize();
    host.emplace(name, std::move(copy));
  }
  return host;
}

inline double sampleAt(const Image& img, int x, int y, int c) {
  const char* row = static_cast<const char*>(img.data()) + static_cast<size_t>(y) * img.pitch();
  int i = x * img.format().channels + c;
  switch (img.format().depth) {
    case Depth::u8: return reinterpret_cast<const uint8_t*>(row)[i];
    case Depth::u16: return reinterpret_cast<const uint16_t*>(row)[i];
    default: return reinterpret_cast<const float*>(row)[i];
  }
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
