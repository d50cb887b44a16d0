#include "cuda/cuda_check.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

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

int plannedMultiprocessors() {
  static const int asked = [] {
    const char* text = std::getenv("POLARPIPE_PLAN_SMS");
    if (!text || !*text) return 0;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(text, &end, 10);
    if (*end || errno || n < 1 || n > 1 << 16)
      throw std::invalid_argument(std::string("POLARPIPE_PLAN_SMS: a count of SMs (1 or more), not '") + text + "'");
    return static_cast<int>(n);
  }();
  const int sms = deviceAttribute(cudaDevAttrMultiProcessorCount);
  return asked > 0 ? std::min(asked, sms) : sms;
}

}  // namespace pp
