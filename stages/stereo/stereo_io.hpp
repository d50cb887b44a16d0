// The 16-bit fixed-point disparity as files and viewers expect it.
#pragma once
#include "pipeline/image.hpp"

namespace pp::stereo {

// Disparity in pixels as float, +inf where invalid (Middlebury's PFM convention).
Image disparityToFloat(const Image& disparity);

// Disparity x 16 with 0 for invalid (16-bit PNG convention).
Image disparityToPng(const Image& disparity);

}  // namespace pp::stereo
