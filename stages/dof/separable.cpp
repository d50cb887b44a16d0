#include "stages/dof/separable.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if POLARPIPE_HAS_CUDA
#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#include "cuda/separable_filter.cuh"
#endif

namespace pp::filter {

std::vector<float> gaussianTaps(int count, double sigma) {
  if (count < 1 || count % 2 == 0)
    throw std::invalid_argument("a Gaussian needs an odd number of taps, got " + std::to_string(count));
  // Like OpenCV: without a sigma, up to 7 taps come from fixed tables.
  static const std::vector<std::vector<float>> small = {
      {1.f},
      {0.25f, 0.5f, 0.25f},
      {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f},
      {0.03125f, 0.109375f, 0.21875f, 0.28125f, 0.21875f, 0.109375f, 0.03125f}};
  if (sigma <= 0 && count <= 7) return small[static_cast<size_t>(count / 2)];
  if (sigma <= 0) sigma = 0.3 * ((count - 1) * 0.5 - 1) + 0.8;
  std::vector<double> w(static_cast<size_t>(count));
  double sum = 0;
  for (int i = 0; i < count; ++i) {
    double x = i - (count - 1) / 2.0;
    w[static_cast<size_t>(i)] = std::exp(-x * x / (2 * sigma * sigma));
    sum += w[static_cast<size_t>(i)];
  }
  std::vector<float> taps;
  for (double v : w) taps.push_back(static_cast<float>(v / sum));
  return taps;
}

namespace {

template <class T> T toSample(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return static_cast<T>(std::min(std::max(v + 0.5f, 0.f), static_cast<float>(std::numeric_limits<T>::max())));
}

template <class T> void separableTyped(const Image& src, Image& dst, const std::vector<float>& taps) {
  int w = src.width(), h = src.height(), c = src.format().channels, r = static_cast<int>(taps.size()) / 2;
  auto in = src.view<T>();
  auto out = dst.view<T>();
  std::vector<float> rows(static_cast<size_t>(w) * h * c);
  auto at = [&](int x, int y, int ch) -> float& { return rows[(static_cast<size_t>(y) * w + x) * c + ch]; };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < c; ++ch) {
        float sum = 0;
        for (int k = 0; k < static_cast<int>(taps.size()); ++k)
          sum += taps[static_cast<size_t>(k)] * static_cast<float>(in.at(std::clamp(x - r + k, 0, w - 1), y, ch));
        at(x, y, ch) = sum;
      }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < c; ++ch) {
        float sum = 0;
        for (int k = 0; k < static_cast<int>(taps.size()); ++k)
          sum += taps[static_cast<size_t>(k)] * at(x, std::clamp(y - r + k, 0, h - 1), ch);
        out.at(x, y, ch) = toSample<T>(sum);
      }
}

void checkShapes(const Image& src, const Image& dst, size_t taps) {
  if (src.format() != dst.format() || src.width() != dst.width() || src.height() != dst.height())
    throw std::invalid_argument("separable filter: source " + toString(src.format()) + " " +
                                std::to_string(src.width()) + "x" + std::to_string(src.height()) + " and destination " +
                                toString(dst.format()) + " " + std::to_string(dst.width()) + "x" +
                                std::to_string(dst.height()) + " differ");
  if (taps % 2 == 0)
    throw std::invalid_argument("separable filter: an odd number of taps, got " + std::to_string(taps));
}

}  // namespace

void separableCpu(const Image& src, Image& dst, const std::vector<float>& taps) {
  checkShapes(src, dst, taps.size());
  switch (src.format().depth) {
    case Depth::u8: return separableTyped<uint8_t>(src, dst, taps);
    case Depth::u16: return separableTyped<uint16_t>(src, dst, taps);
    default: return separableTyped<float>(src, dst, taps);
  }
}

#if POLARPIPE_HAS_CUDA

namespace {
std::atomic<int> nextSlot{0};
}

SeparableCuda::SeparableCuda(std::vector<float> taps) : taps_(std::move(taps)) {
  if (taps_.empty() || taps_.size() % 2 == 0)
    throw std::invalid_argument("separable filter: an odd number of taps, got " + std::to_string(taps_.size()));
  int slot = static_cast<int>(taps_.size()) <= kMaxConstantTaps ? nextSlot.fetch_add(1) : kConstantSlots;
  if (slot < kConstantSlots) {
    slot_ = slot;
    uploadConstantTaps(slot_, taps_.data(), static_cast<int>(taps_.size()));
  } else {  // more filters than slots, or more than 64 taps: read from global memory
    PP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&global_), sizeof(float) * taps_.size()));
    PP_CUDA_CHECK(cudaMemcpy(global_, taps_.data(), sizeof(float) * taps_.size(), cudaMemcpyHostToDevice));
    finishSynchronousCopies();
  }
}

SeparableCuda::~SeparableCuda() {
  if (global_) cudaFree(global_);
}

void SeparableCuda::apply(const Image& src, Image& scratch, Image& dst, StreamHandle stream) const {
  checkShapes(src, dst, taps_.size());
  if (scratch.format() != Format{Depth::f32, src.format().channels} || scratch.width() != src.width() ||
      scratch.height() != src.height())
    throw std::invalid_argument("separable filter: scratch must be f32 with the source's size and channels");
  DeviceTaps t{static_cast<int>(taps_.size()), slot_, global_};
  switch (src.format().depth) {
    case Depth::u8:
      launchRowPass<uint8_t>(src.view<uint8_t>(), scratch.view<float>(), t, stream);
      launchColumnPass<uint8_t>(scratch.view<float>(), dst.view<uint8_t>(), t, stream);
      break;
    case Depth::u16:
      launchRowPass<uint16_t>(src.view<uint16_t>(), scratch.view<float>(), t, stream);
      launchColumnPass<uint16_t>(scratch.view<float>(), dst.view<uint16_t>(), t, stream);
      break;
    default:
      launchRowPass<float>(src.view<float>(), scratch.view<float>(), t, stream);
      launchColumnPass<float>(scratch.view<float>(), dst.view<float>(), t, stream);
  }
}

#else

SeparableCuda::SeparableCuda(std::vector<float>) { throw std::logic_error("separable filter: this build has no CUDA"); }
SeparableCuda::~SeparableCuda() = default;
void SeparableCuda::apply(const Image&, Image&, Image&, StreamHandle) const {}

#endif

}  // namespace pp::filter
