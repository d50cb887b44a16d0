#include "stages/stereo/stereo_io.hpp"

#include <cmath>
#include <cstring>

#include "cuda/sgm_types.hpp"

namespace pp::stereo {

Image toGrey(const Image& picture) {
  if (picture.format() != Format{Depth::u8, 1} && picture.format() != Format{Depth::u8, 3})
    throw std::invalid_argument("stereo takes 8-bit grey or RGB pictures, not " + toString(picture.format()));
  Image grey({Depth::u8, 1}, picture.width(), picture.height(), MemoryKind::host);
  auto in = picture.view<uint8_t>();
  auto out = grey.view<uint8_t>();
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      out.at(x, y) = in.channels == 1 ? in.at(x, y) : static_cast<uint8_t>((in.at(x, y, 0) * 4899 + in.at(x, y, 1) * 9617 + in.at(x, y, 2) * 1868 + 8192) >> 14);
  return grey;
}

Image disparityToFloat(const Image& disparity) {
  Image out({Depth::f32, 1}, disparity.width(), disparity.height(), MemoryKind::host);
  auto d = disparity.view<uint16_t>();
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x)
      out.view<float>().at(x, y) = d.at(x, y) == kInvalidDisparity ? INFINITY : static_cast<float>(d.at(x, y)) / (1 << kSubpixelBits);
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
