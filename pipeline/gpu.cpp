#include "pipeline/gpu.hpp"

#include <stdexcept>

#if POLARPIPE_HAS_CUDA
#include <nvtx3/nvToolsExt.h>

#include "cuda/cuda_check.hpp"
#endif

namespace pp {

#if POLARPIPE_HAS_CUDA

bool gpuAvailable() {
  static const bool available = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return available;
}

void synchronizeDevice() {
  if (gpuAvailable()) PP_CUDA_CHECK(cudaDeviceSynchronize());
}

bool gpuIsIntegrated() { return gpuAvailable() && deviceAttribute(cudaDevAttrIntegrated) != 0; }

std::string gpuDescription() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  int driver = 0;
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0) ||
      (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0))
    return "no NVIDIA GPU found";
  if (err == cudaErrorInsufficientDriver) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    return "the NVIDIA driver (CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ") is older than this build's CUDA " + std::to_string(runtime / 1000) + "." +
           std::to_string(runtime % 1000 / 10) + ": no usable GPU";
  }
  if (err != cudaSuccess) return std::string("no usable NVIDIA GPU (") + cudaGetErrorString(err) + ")";
  int device = 0;
  PP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
}

Stream::Stream() {
  if (gpuAvailable()) PP_CUDA_CHECK(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking));
}
Stream::~Stream() {
  if (handle_) cudaStreamDestroy(handle_);
}
void Stream::synchronize() const {
  if (handle_) PP_CUDA_CHECK(cudaStreamSynchronize(handle_));
}

Event::Event() {
  if (gpuAvailable()) PP_CUDA_CHECK(cudaEventCreate(&event_));
}
Event::~Event() {
  if (event_) cudaEventDestroy(event_);
}
void Event::record(StreamHandle stream) {
  if (event_) PP_CUDA_CHECK(cudaEventRecord(event_, stream));
}
void Event::waitOn(StreamHandle stream) const {
  if (event_ && stream) PP_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0));
}
void Event::synchronize() const {
  if (event_) PP_CUDA_CHECK(cudaEventSynchronize(event_));
}
float Event::millisecondsSince(const Event& start) const {
  float ms = 0;
  if (event_ && start.event_) PP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

#else  // no CUDA in this build

bool gpuAvailable() { return false; }
bool gpuIsIntegrated() { return false; }
void synchronizeDevice() {}
std::string gpuDescription() { return "no CUDA in this build"; }
Stream::Stream() = default;
Stream::~Stream() = default;
void Stream::synchronize() const {}
Event::Event() = default;
Event::~Event() = default;
void Event::record(StreamHandle) {}
void Event::waitOn(StreamHandle) const {}
void Event::synchronize() const {}
float Event::millisecondsSince(const Event&) const { return 0; }

#endif

bool useCuda(const std::string& backend) {
  if (backend == "cpu") return false;
  if (backend == "cuda" && !gpuAvailable()) throw std::invalid_argument("cuda requested, but " + gpuDescription());
  return gpuAvailable();
}

#if POLARPIPE_HAS_CUDA
ProfilerRange::ProfilerRange(const char* name) { nvtxRangePushA(name); }
ProfilerRange::~ProfilerRange() { nvtxRangePop(); }
#else
ProfilerRange::ProfilerRange(const char*) {}
ProfilerRange::~ProfilerRange() = default;
#endif

}  // namespace pp
