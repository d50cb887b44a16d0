// Typed allocations for kernel scratch that is not an image: device memory (census codes, the SGM
// cost volume) and page-locked host memory for small results read back every frame (a copy into it
// is one DMA, where one into pageable memory is staged through the driver's own buffer). CUDA
// builds only.
#pragma once
#include <cstddef>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace pp {

struct DeviceMemory {
  static void* allocate(size_t bytes) {
    void* p = nullptr;
    PP_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFree(p); }
};

struct PinnedMemory {
  static void* allocate(size_t bytes) {
    void* p = nullptr;
    PP_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFreeHost(p); }
};

template <class T, class Memory> class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t count) : count_(count) {
    if (count) data_ = static_cast<T*>(Memory::allocate(count * sizeof(T)));
  }
  ~Buffer() {
    if (data_) Memory::release(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(o.data_), count_(o.count_) { o.data_ = nullptr, o.count_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

template <class T> using DeviceBuffer = Buffer<T, DeviceMemory>;
template <class T> using PinnedBuffer = Buffer<T, PinnedMemory>;

}  // namespace pp
