// Where buffers live and when a consumer needs a copy. On an integrated GPU (Jetson) pinned host
// memory is mapped and the GPU reads it in place; on a discrete GPU it is copied on the
// consumer's stream.
#pragma once
#include "cuda/image_view.hpp"
#include "pipeline/node.hpp"

namespace pp {

// Memory a node of `backend` writes its outputs to (sources and CPU stages write host memory,
// pinned when a GPU is present so that copies to it are asynchronous).
inline MemoryKind outputMemory(Backend backend, bool gpuPresent) {
  if (backend == Backend::cuda) return MemoryKind::device;
  return gpuPresent ? MemoryKind::pinned : MemoryKind::host;
}

inline bool readableInPlace(MemoryKind have, Backend consumer, bool integratedGpu) {
  if (consumer == Backend::cpu) return have != MemoryKind::device;
  return have == MemoryKind::device || (have == MemoryKind::pinned && integratedGpu);
}

}  // namespace pp
