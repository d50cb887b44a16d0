// Separable filtering for the dof stage and anything else: a row pass into float, a column pass
// back to the sample type, replicate border; CPU reference and CUDA (cuda/separable_filter.cu).
#pragma once
#include <vector>

#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"

namespace pp::filter {

// OpenCV's getGaussianKernel: `count` odd taps summing to 1; sigma <= 0 takes OpenCV's fixed
// tables up to 7 taps, else its default 0.3 * ((count - 1) / 2 - 1) + 0.8.
std::vector<float> gaussianTaps(int count, double sigma = 0);

// CPU reference: src and dst of one format (u8, u16 or f32; 1, 3 or 4 channels), same size.
void separableCpu(const Image& src, Image& dst, const std::vector<float>& taps);

// The CUDA backend: taps go to a constant-memory slot when the filter is made (up to 64 taps and
// 16 filters in a process), else to device memory. apply() enqueues both passes on `stream`.
class SeparableCuda {
 public:
  explicit SeparableCuda(std::vector<float> taps);
  ~SeparableCuda();
  SeparableCuda(const SeparableCuda&) = delete;
  SeparableCuda& operator=(const SeparableCuda&) = delete;
  // src, dst: device images of one format; scratch: device f32 image of src's size and channels.
  void apply(const Image& src, Image& scratch, Image& dst, StreamHandle stream) const;
  int taps() const { return static_cast<int>(taps_.size()); }

 private:
  std::vector<float> taps_;
  int slot_ = -1;
  float* global_ = nullptr;
};

}  // namespace pp::filter
