// Dynamic shared memory past the 48 KiB every device gives: the per-kernel opt-in, or a clear
// error where the device allows less (Xavier 96 KiB, Orin and Hopper more). The opt-in is the
// kernel's limit, not what a launch takes, so it is set to all the device allows: a plan or a launch
// that needs less never lowers the limit below what another one of the same kernel (another
// matcher's plan, another stage's thread) launches with.
#pragma once
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"

namespace pp {

template <class Kernel> void allowSharedMemory(Kernel kernel, size_t bytes, const char* what) {
  if (bytes <= 48 * 1024) return;
  cudaFuncAttributes attributes{};
  PP_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const int limit =
      deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) - static_cast<int>(attributes.sharedSizeBytes);
  if (bytes > static_cast<size_t>(limit))
    throw std::invalid_argument(std::string(what) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory a block; this device allows " + std::to_string(limit));
  PP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
}

}  // namespace pp
