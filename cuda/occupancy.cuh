// How many blocks of a kernel the current device holds at once, for launchers that size or order
// their work by what runs together.
#pragma once
#include <algorithm>

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"

namespace pp {

// Blocks of `threads` threads (no dynamic shared memory) resident over all SMs (those planned:
// plannedMultiprocessors); at least one an SM.
template <class Kernel> int residentBlocks(Kernel kernel, int threads) {
  int perSm = 0;
  PP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, 0));
  return plannedMultiprocessors() * std::max(perSm, 1);
}

}  // namespace pp
