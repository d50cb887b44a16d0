// The CUDA device, streams and events, behind one small interface that also builds without CUDA:
// then there is no device, streams are null and events record nothing.
#pragma once
#include <string>

#if POLARPIPE_HAS_CUDA
#include <cuda_runtime_api.h>

#include "cuda/device.hpp"  // deviceAttribute
#endif

namespace pp {

#if POLARPIPE_HAS_CUDA
using StreamHandle = cudaStream_t;
#else
using StreamHandle = struct NoCudaStream*;
#endif

// True when this build has CUDA and a device answers.
bool gpuAvailable();
// Integrated GPUs (Jetson) share DRAM with the CPU: mapped pinned memory is read in place.
bool gpuIsIntegrated();
// "NVIDIA H100 80GB HBM3 (sm_90)", or why there is none.
std::string gpuDescription();
// Whether a stage that has a CUDA backend runs on it when `backend` (auto, cuda, cpu) is asked:
// auto takes CUDA when a device is present. Throws std::invalid_argument when cuda is asked and
// there is no device, saying why.
bool useCuda(const std::string& backend);
// Waits for all work on the device (every stream); nothing without one.
void synchronizeDevice();

class Stream {
 public:
  Stream();  // a non-blocking stream when a GPU is present, else null
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  StreamHandle handle() const { return handle_; }
  void synchronize() const;

 private:
  StreamHandle handle_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(StreamHandle stream);
  // Makes `stream` wait for the work recorded in this event, without blocking the host.
  void waitOn(StreamHandle stream) const;
  void synchronize() const;
  // Milliseconds between `start` and this event; both recorded and complete. 0 without CUDA.
  float millisecondsSince(const Event& start) const;

 private:
#if POLARPIPE_HAS_CUDA
  cudaEvent_t event_ = nullptr;
#endif
};

// Names the work enqueued while it lives, for profilers (an NVTX range; nothing without CUDA or
// without a profiler attached): Nsight Compute's --print-nvtx-rename kernel reports each kernel
// under the name of the stage that launched it (tools/jetson-projection).
class ProfilerRange {
 public:
  explicit ProfilerRange(const char* name);
  ~ProfilerRange();
  ProfilerRange(const ProfilerRange&) = delete;
  ProfilerRange& operator=(const ProfilerRange&) = delete;
};

}  // namespace pp
