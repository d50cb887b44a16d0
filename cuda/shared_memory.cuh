// Dynamic shared memory past the 48 KiB every device gives: the per-kernel opt-in, or a clear
// error where the device allows less (Xavier 96 KiB, Orin and Hopper more).
#pragma once
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"

namespace pp {

template <class Kernel> void allowSharedMemory(Kernel kernel, size_t bytes, const char* what) {
  if (bytes <= 48 * 1024) return;
  const int limit = deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  if (bytes > static_cast<size_t>(limit))
    throw std::invalid_argument(std::string(what) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory a block; this device allows " + std::to_string(limit));
  PP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace pp
