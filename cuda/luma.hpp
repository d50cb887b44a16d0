// OpenCV's RGB2GRAY in 14-bit fixed point: how a colour camera's S0 becomes the grey image that
// stereo matching and face detection read, on the CPU (pp::rgbToGrey) and in CUDA alike.
#pragma once
#include "cuda/image_view.hpp"

namespace pp {

PP_HD unsigned lumaOf(unsigned r, unsigned g, unsigned b) {
  return (r * 4899 + g * 9617 + b * 1868 + (1u << 13)) >> 14;
}

}  // namespace pp
