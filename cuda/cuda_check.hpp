// Every CUDA call and launch is checked: a failure throws CudaError naming the call and the place.
#pragma once
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace pp {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throwCudaError(cudaError_t err, const char* what, const char* file, int line);

}  // namespace pp

#define PP_CUDA_CHECK(expr)                                                               \
  do {                                                                                    \
    cudaError_t pp_err_ = (expr);                                                         \
    if (pp_err_ != cudaSuccess) ::pp::throwCudaError(pp_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports bad launch configurations at once.
#define PP_CUDA_CHECK_LAUNCH() PP_CUDA_CHECK(cudaGetLastError())
