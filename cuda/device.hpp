// The current device: its attributes, for launchers that size their work by the device, and the
// end of its synchronous copies.
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

namespace pp {

// One attribute of the current device (throws CudaError where CUDA fails).
int deviceAttribute(cudaDeviceAttr attribute);

// The SMs a launcher sizes or orders its work by: the device's, or fewer where the environment's
// POLARPIPE_PLAN_SMS asks (read at each call), so that a big GPU runs the launches a Jetson would
// (tools/jetson-projection measures a Jetson's bytes that way). Throws std::invalid_argument where it
// is not a count >= 1.
int plannedMultiprocessors();

// The shared memory an SM has for blocks (bytes), for launchers that size their work by it: the
// device's, or less where the environment's POLARPIPE_PLAN_SHARED_KIB asks (AGX Xavier 96, AGX Orin
// 164), with POLARPIPE_PLAN_SMS. Throws std::invalid_argument where it is not a count >= 1.
size_t plannedSharedMemoryPerMultiprocessor();

// Waits until what CUDA's synchronous calls wrote to the device has landed: cudaMemcpy and
// cudaMemcpyToSymbol from pageable memory, and cudaMemset, may return before the device has done
// them, and they go on the legacy default stream, which the pipeline's non-blocking streams do not
// wait for. Setup uploads and test poison call it before any stream reads what they wrote.
void finishSynchronousCopies();

}  // namespace pp
