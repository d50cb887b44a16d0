// Owning, pitched images in host, pinned host or device memory.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "cuda/image_view.hpp"
#include "pipeline/gpu.hpp"

namespace pp {

std::string toString(Format f);  // "u8x1", "u16x1", "f32x3", ...
std::string toString(MemoryKind m);

// Row pitch used for every allocation: a multiple of 256 bytes, which coalesces on every GPU
// and lets host and device copies of one image share a pitch.
size_t pitchFor(Format format, int width);

class Image {
 public:
  Image() = default;
  Image(Format format, int width, int height, MemoryKind memory);
  // Rows `pitch` bytes apart: packed rows (pitch = row bytes) for buffers a camera fills by DMA;
  // `tail` more bytes after the last row for what the camera sends after the image (chunk data).
  Image(Format format, int width, int height, MemoryKind memory, size_t pitch, size_t tail = 0);

  Format format() const { return format_; }
  int width() const { return width_; }
  int height() const { return height_; }
  size_t pitch() const { return pitch_; }
  MemoryKind memory() const { return memory_; }
  bool empty() const { return !data_; }
  void* data() const { return data_.get(); }
  size_t bytes() const { return pitch_ * static_cast<size_t>(height_); }
  size_t capacity() const { return bytes() + tail_; }  // the pixels and the tail

  template <class T> ImageView<T> view() {
    check<T>();
    return {static_cast<T*>(data_.get()), width_, height_, pitch_, format_.channels, memory_};
  }
  template <class T> ImageView<const T> view() const {
    check<T>();
    return {static_cast<const T*>(data_.get()), width_, height_, pitch_, format_.channels, memory_};
  }

 private:
  template <class T> void check() const {
    if (DepthOf<T>::value != format_.depth)
      throw std::logic_error("image of format " + toString(format_) + " viewed as another depth");
  }
  struct Free {
    MemoryKind memory;
    void operator()(void* p) const;
  };
  Format format_{};
  int width_ = 0, height_ = 0;
  size_t pitch_ = 0, tail_ = 0;
  MemoryKind memory_ = MemoryKind::host;
  std::unique_ptr<void, Free> data_{nullptr, Free{MemoryKind::host}};
};

// Number of image buffers allocated so far in this process: steady state allocates none.
uint64_t imageAllocations();

// Copies pixels between any two memory kinds; asynchronous on `stream` when a device is involved.
// Sizes and formats must match.
void copyImage(const Image& src, Image& dst, StreamHandle stream);

// One sample of a host image as a double, whatever its depth (for colour maps and comparisons).
double sampleAt(const Image& image, int x, int y, int channel);

// Grey (u8x1) from an RGB (u8x3) host image of the same size, with OpenCV's RGB2GRAY weights in
// 14-bit fixed point (cuda/luma.hpp does the same on the device).
void rgbToGrey(const Image& rgb, Image& grey);

// Fills every byte with `value`: tests poison outputs so an unwritten pixel shows. Device memory
// holds it when this returns, whichever stream reads it next.
void fillBytes(Image& image, uint8_t value);

}  // namespace pp
