// The current device's attributes, for launchers that size their work by the device.
#pragma once
#include <cuda_runtime_api.h>

namespace pp {

// One attribute of the current device (throws CudaError where CUDA fails).
int deviceAttribute(cudaDeviceAttr attribute);

}  // namespace pp
