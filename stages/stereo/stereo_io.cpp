#include "stages/stereo/stereo_io.hpp"

#include <cmath>
#include <cstring>

#include "cuda/sgm_types.hpp"

namespace pp::stereo {

Image disparityToFloat(const Image& disparity) {
  Image out({Depth::f32, 1}, disparity.width(), disparity.height(), MemoryKind::host);
  auto d = disparity.view<uint16_t>();
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x)
      out.view<float>().at(x, y) =
          d.at(x, y) == kInvalidDisparity ? INFINITY : static_cast<float>(d.at(x, y)) / (1 << kSubpixelBits);
  return out;
}

Image disparityToPng(const Image& disparity) {
  Image out({Depth::u16, 1}, disparity.width(), disparity.height(), MemoryKind::host);
  auto d = disparity.view<uint16_t>();
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x) out.view<uint16_t>().at(x, y) = d.at(x, y) == kInvalidDisparity ? 0 : d.at(x, y);
  return out;
}

}  // namespace pp::stereo
