// RGB to grey on the device (cuda/luma.hpp's weights).
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/luma.hpp"

namespace pp {

// rgb u8x3 to grey u8x1 of the same size, device memory.
void launchLuma(ImageView<const uint8_t> rgb, ImageView<uint8_t> grey, cudaStream_t stream);

}  // namespace pp
