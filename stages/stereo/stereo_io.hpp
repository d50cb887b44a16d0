// Conversions at the edges of stereo matching: pictures to grey, and the 16-bit fixed-point
// disparity to what files and viewers expect.
#pragma once
#include "pipeline/image.hpp"

namespace pp::stereo {

// u8x1 from u8x1 (a copy) or u8x3 RGB (OpenCV's RGB2GRAY weights, 14-bit fixed point).
Image toGrey(const Image& picture);

// Disparity in pixels as float, +inf where invalid (Middlebury's PFM convention).
Image disparityToFloat(const Image& disparity);

// Disparity x 16 with 0 for invalid (16-bit PNG convention).
Image disparityToPng(const Image& disparity);

}  // namespace pp::stereo
