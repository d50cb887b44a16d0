#include "cuda/cuda_check.hpp"

#include "cuda/device.hpp"

namespace pp {

void throwCudaError(cudaError_t err, const char* what, const char* file, int line) {
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in " + what +
                  " at " + file + ":" + std::to_string(line));
}

int deviceAttribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  PP_CUDA_CHECK(cudaGetDevice(&device));
  PP_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

}  // namespace pp
