// Separable convolution: a row pass into a float image, then a column pass back to the sample type,
// replicate border. Taps up to kMaxConstantTaps live in constant memory (one slot per filter, filled
// once when the filter is made); longer filters read theirs from global memory.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/image_view.hpp"

namespace pp::filter {

constexpr int kMaxConstantTaps = 64;
constexpr int kConstantSlots = 16;

// Where a filter's taps are on the device: a constant-memory slot, or global memory.
struct DeviceTaps {
  int count = 0;  // odd: radius = count / 2
  int slot = -1;  // constant-memory slot, or -1
  const float* global = nullptr;
};

// Copies taps into constant slot `slot` (synchronous; at setup, not per frame).
void uploadConstantTaps(int slot, const float* taps, int count);

// src: T with C channels; dst: float with C channels, same size.
template <class T>
void launchRowPass(ImageView<const T> src, ImageView<float> dst, DeviceTaps taps, cudaStream_t stream);
// src: float; dst: T (rounded and clamped for integer T), same size.
template <class T>
void launchColumnPass(ImageView<const float> src, ImageView<T> dst, DeviceTaps taps, cudaStream_t stream);

}  // namespace pp::filter
