// tools/bench --sms N: the GPU cases on N of the GPU's SMs, as a Jetson's few SMs run them.
#pragma once

namespace pp::bench {

// Makes a CUDA green context of at least `sms` SMs (the driver rounds up to its partition
// granularity) current to the calling thread, so that the streams this thread makes from then on,
// and the kernels launched on them, run on those SMs only. Returns the SMs granted. Throws
// std::runtime_error where the driver has no green contexts (before CUDA 12.4) or refuses the split.
// A green context is current to one thread: work that other threads launch runs on the whole GPU.
int runOnMultiprocessors(int sms);

}  // namespace pp::bench
