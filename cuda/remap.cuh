// Bilinear remap through a map of source coordinates (f32x2 per output pixel), in OpenCV's fixed
// point: coordinates rounded to 1/32 pixel, weights in 1/1024, taps outside the source read 0.
// The same integer arithmetic as stages/stereo/rectify.cpp's CPU reference.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/image_view.hpp"

namespace pp::stereo {

// src and dst: u8 with 1 or 3 channels; map: f32x2 at dst's size; device memory.
void launchRemap(ImageView<const uint8_t> src, ImageView<const float> map, ImageView<uint8_t> dst, cudaStream_t stream);

}  // namespace pp::stereo
