// Programmatic dependent launch (sm_90 on): a kernel launched with launchDependent is launched
// while the kernel before it in the stream finishes, rather than after, so that the launch's
// latency does not sit between the two. The kernel must call waitForPreviousKernel() before it
// reads or writes anything the kernels before it touch; since every such kernel does, the wait
// covers all of them, not only the one just before.
//
// None of them lets the next start any earlier (griddepcontrol.launch_dependents): the next
// kernel's blocks would take SMs while the kernel's last blocks still run, which was slower. Where
// the device or the toolkit lacks it (Jetsons; CUDA 11.4) the launch is an ordinary one and the
// wait does nothing.
#pragma once
#include <utility>

#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"

namespace pp {

// Until the kernels before this one in the stream are done and their writes visible.
__device__ __forceinline__ void waitForPreviousKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// `kernel` on `stream`, launched as the kernel before it there finishes (see above). After a copy,
// a memset or an event the launch is an ordinary one.
template <class... Params, class... Args> void launchDependent(void (*kernel)(Params...), dim3 grid, dim3 block,
                                                               size_t sharedBytes, cudaStream_t stream,
                                                               Args&&... args) {
#if CUDART_VERSION >= 12000
  if (deviceAttribute(cudaDevAttrComputeCapabilityMajor) >= 9) {
    cudaLaunchAttribute overlap{};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid, config.blockDim = block, config.dynamicSmemBytes = sharedBytes, config.stream = stream;
    config.attrs = &overlap, config.numAttrs = 1;
    PP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
    return;
  }
#endif
  kernel<<<grid, block, sharedBytes, stream>>>(std::forward<Args>(args)...);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp
