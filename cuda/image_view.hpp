// Non-owning views of pitched images. Header-only and dependency-free so that cuda/ kernels,
// stage backends and the runtime all share one type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define PP_HD __host__ __device__ __forceinline__
#else
#define PP_HD inline
#endif

namespace pp {

enum class MemoryKind : uint8_t { host, pinned, device };

enum class Depth : uint8_t { u8, u16, f32 };

struct Format {
  Depth depth = Depth::u8;
  int channels = 1;  // interleaved: 1, 3 (RGB) or 4 (RGBA)
  friend bool operator==(Format a, Format b) { return a.depth == b.depth && a.channels == b.channels; }
  friend bool operator!=(Format a, Format b) { return !(a == b); }
};

constexpr size_t depthBytes(Depth d) { return d == Depth::u8 ? 1 : d == Depth::u16 ? 2 : 4; }
constexpr size_t pixelBytes(Format f) { return depthBytes(f.depth) * static_cast<size_t>(f.channels); }

template <class T> struct DepthOf;
template <> struct DepthOf<uint8_t> { static constexpr Depth value = Depth::u8; };
template <> struct DepthOf<uint16_t> { static constexpr Depth value = Depth::u16; };
template <> struct DepthOf<float> { static constexpr Depth value = Depth::f32; };
template <class T> struct DepthOf<const T> : DepthOf<T> {};

// `pitch` is in bytes; `channels` samples of T per pixel, interleaved. ImageView<const T> is the
// read-only view; a mutable view converts to it implicitly.
template <class T> struct ImageView {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;

  T* data = nullptr;
  int width = 0;
  int height = 0;
  size_t pitch = 0;
  int channels = 1;
  MemoryKind memory = MemoryKind::host;

  PP_HD T* row(int y) const {
    return reinterpret_cast<T*>(reinterpret_cast<Byte*>(data) + static_cast<size_t>(y) * pitch);
  }
  PP_HD T& at(int x, int y, int c = 0) const { return row(y)[x * channels + c]; }
  // Every row starts on a multiple of `bytes` (a power of two): vector loads and stores are safe.
  PP_HD bool rowsAligned(size_t bytes) const {
    return ((reinterpret_cast<uintptr_t>(data) | pitch) & (bytes - 1)) == 0;
  }
  size_t rowBytes() const { return static_cast<size_t>(width) * channels * sizeof(T); }
  bool empty() const { return data == nullptr || width <= 0 || height <= 0; }
  Format format() const { return {DepthOf<T>::value, channels}; }

  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0> operator ImageView<const U>() const {
    return {data, width, height, pitch, channels, memory};
  }
};

}  // namespace pp
