// The current device's attributes, for launchers that size their work by the device.
#pragma once
#include <cuda_runtime_api.h>

namespace pp {

// One attribute of the current device (throws CudaError where CUDA fails).
int deviceAttribute(cudaDeviceAttr attribute);

// The SMs a launcher sizes or orders its work by: the device's, or fewer where the environment's
// POLARPIPE_PLAN_SMS asks, so that a big GPU runs the launches a Jetson would (tools/jetson-projection
// measures a Jetson's bytes that way). Throws std::invalid_argument where it is not a count >= 1.
int plannedMultiprocessors();

}  // namespace pp
