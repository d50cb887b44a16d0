// Launcher of the fused polarization demosaic: reads the raw frame once and writes every
// requested plane once. Views are device (or mapped) memory; nothing is allocated or synchronized.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/polar_math.hpp"

namespace pp::polar {

template <class T> void launchDemosaic(const Settings& s, ImageView<const uint8_t> raw, int rawWidth,
                                       const Planes<T>& out, cudaStream_t stream);

}  // namespace pp::polar
