#include "pipeline/image.hpp"

#include "cuda/luma.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if POLARPIPE_HAS_CUDA
#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#endif

namespace pp {

namespace {
std::atomic<uint64_t> allocationCount{0};
constexpr size_t kRowAlignment = 256;
}  // namespace

std::string toString(Format f) {
  const char* depth = f.depth == Depth::u8 ? "u8" : f.depth == Depth::u16 ? "u16" : "f32";
  return std::string(depth) + "x" + std::to_string(f.channels);
}

std::string toString(MemoryKind m) {
  return m == MemoryKind::host ? "host" : m == MemoryKind::pinned ? "pinned" : "device";
}

size_t pitchFor(Format format, int width) {
  size_t row = pixelBytes(format) * static_cast<size_t>(width);
  return (row + kRowAlignment - 1) / kRowAlignment * kRowAlignment;
}

Image::Image(Format format, int width, int height, MemoryKind memory)
    : Image(format, width, height, memory, pitchFor(format, width)) {}

Image::Image(Format format, int width, int height, MemoryKind memory, size_t pitch, size_t tail)
    : format_(format), width_(width), height_(height), pitch_(pitch), tail_(tail), memory_(memory) {
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("image size must be positive, got " + std::to_string(width) + "x" +
                                std::to_string(height));
  if (pitch < pixelBytes(format) * static_cast<size_t>(width))
    throw std::invalid_argument("image pitch " + std::to_string(pitch) + " is shorter than a row");
  void* p = nullptr;
  // Whole alignment units: aligned_alloc takes no other size (a camera's packed rows and chunk tail
  // need not make one).
  size_t bytes = (capacity() + kRowAlignment - 1) / kRowAlignment * kRowAlignment;
  switch (memory) {
    case MemoryKind::host:
      p = std::aligned_alloc(kRowAlignment, bytes);
      if (!p) throw std::bad_alloc();
      break;
#if POLARPIPE_HAS_CUDA
    case MemoryKind::pinned:
      // Mapped so that an integrated GPU can read it in place.
      PP_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
      break;
    case MemoryKind::device: PP_CUDA_CHECK(cudaMalloc(&p, bytes)); break;
#else
    default: throw std::logic_error(toString(memory) + " memory needs a CUDA build");
#endif
  }
  ++allocationCount;
  data_ = std::unique_ptr<void, Free>(p, Free{memory});
}

void Image::Free::operator()(void* p) const {
  if (!p) return;
#if POLARPIPE_HAS_CUDA
  if (memory == MemoryKind::pinned) {
    cudaFreeHost(p);
    return;
  }
  if (memory == MemoryKind::device) {
    cudaFree(p);
    return;
  }
#endif
  std::free(p);
}

uint64_t imageAllocations() { return allocationCount.load(); }

void copyImage(const Image& src, Image& dst, StreamHandle stream) {
  if (src.format() != dst.format() || src.width() != dst.width() || src.height() != dst.height())
    throw std::invalid_argument("copyImage: " + toString(src.format()) + " " + std::to_string(src.width()) + "x" +
                                std::to_string(src.height()) + " into " + toString(dst.format()) + " " +
                                std::to_string(dst.width()) + "x" + std::to_string(dst.height()));
  size_t rowBytes = pixelBytes(src.format()) * static_cast<size_t>(src.width());
  bool hostOnly = src.memory() != MemoryKind::device && dst.memory() != MemoryKind::device;
  if (hostOnly) {
#if POLARPIPE_HAS_CUDA
    // Earlier device work on this stream may still be writing either buffer.
    if (stream) PP_CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
    for (int y = 0; y < src.height(); ++y)
      std::memcpy(static_cast<char*>(dst.data()) + y * dst.pitch(),
                  static_cast<const char*>(src.data()) + y * src.pitch(), rowBytes);
    return;
  }
#if POLARPIPE_HAS_CUDA
  PP_CUDA_CHECK(cudaMemcpy2DAsync(dst.data(), dst.pitch(), src.data(), src.pitch(), rowBytes, src.height(),
                                  cudaMemcpyDefault, stream));
#endif
}

double sampleAt(const Image& image, int x, int y, int channel) {
  const char* row = static_cast<const char*>(image.data()) + static_cast<size_t>(y) * image.pitch();
  int i = x * image.format().channels + channel;
  switch (image.format().depth) {
    case Depth::u8: return reinterpret_cast<const uint8_t*>(row)[i];
    case Depth::u16: return reinterpret_cast<const uint16_t*>(row)[i];
    default: return reinterpret_cast<const float*>(row)[i];
  }
}

void rgbToGrey(const Image& rgb, Image& grey) {
  auto in = rgb.view<uint8_t>();
  auto out = grey.view<uint8_t>();
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      out.at(x, y) = static_cast<uint8_t>(lumaOf(in.at(x, y, 0), in.at(x, y, 1), in.at(x, y, 2)));
}

void fillBytes(Image& image, uint8_t value) {
  if (image.memory() == MemoryKind::device) {
#if POLARPIPE_HAS_CUDA
    PP_CUDA_CHECK(cudaMemset(image.data(), value, image.bytes()));
    finishSynchronousCopies();
#endif
    return;
  }
  std::memset(image.data(), value, image.bytes());
}

}  // namespace pp
