// Images in device memory: a fill (the tests' poison) has landed before work on the pipeline's
// non-blocking streams reads it.
#include <vector>

#include <gtest/gtest.h>

#include "cuda/cuda_check.hpp"
#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"

namespace pp {
namespace {

TEST(DeviceImage, AFillHasLandedForWorkOnAnyStream) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  // 1 GiB takes the device a fraction of a millisecond to fill; its last row, copied back on a
  // non-blocking stream at once, is filled last.
  Image image({Depth::u8, 1}, 16384, 65536, MemoryKind::device);
  Stream stream;
  std::vector<uint8_t> lastRow(static_cast<size_t>(image.width()));
  const auto* last = static_cast<const uint8_t*>(image.data()) + (image.height() - 1) * image.pitch();
  for (uint8_t value : {0x11, 0xA5, 0x3C, 0xFF, 0x00}) {
    fillBytes(image, value);
    PP_CUDA_CHECK(cudaMemcpyAsync(lastRow.data(), last, lastRow.size(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
    size_t other = 0;
    for (uint8_t b : lastRow) other += b != value;
    EXPECT_EQ(other, 0u) << "bytes of the last row not yet " << int{value};
  }
}

}  // namespace
}  // namespace pp
