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

void finishSynchronousCopies() { PP_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy)); }

namespace {

// The environment's `name` as a count from 1 to 2^16 (what it asks for), or 0 where it is unset.
int askedCount(const char* name, const char* what) {
  const char* text = std::getenv(name);
  if (!text || !*text) return 0;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text, &end, 10);
  if (*end || errno || n < 1 || n > 1 << 16)
    throw std::invalid_argument(std::string(name) + ": " + what + " (1 or more), not '" + text + "'");
  return static_cast<int>(n);
}

}  // namespace

int plannedMultiprocessors() {
  const int asked = askedCount("POLARPIPE_PLAN_SMS", "a count of SMs");
  const int sms = deviceAttribute(cudaDevAttrMultiProcessorCount);
  return asked > 0 ? std::min(asked, sms) : sms;
}

size_t plannedSharedMemoryPerMultiprocessor() {
  const int askedKib = askedCount("POLARPIPE_PLAN_SHARED_KIB", "KiB of shared memory an SM");
  const size_t bytes = deviceAttribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  return askedKib > 0 ? std::min(static_cast<size_t>(askedKib) * 1024, bytes) : bytes;
}

}  // namespace pp
