// tools/bench cases stereo/volume-*: one pass over an SGM sum volume (the half-size 128-disparity one
// and the full-size 256-disparity one, 16 bits a sum) that only stores, adds with plain loads and
// stores, or adds with 64-bit reductions (once, or three times a word in a row as the walkers of a
// front do when the L2 merges them), and the same reductions on f16 sums, eight to a 128-bit
// reduction (whether the L2's rate is one of operations or of bytes). What an aggregation design
// that moves the volume N times in such passes cannot beat. The volume is far larger than the L2,
// so one buffer serves every run.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"
#include "pipeline/device_buffer.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::bench {
namespace {

enum class Pass { store, add, reduce, reduceThrice, reduceHalves, reduceHalvesThrice };

constexpr unsigned long long kFourOnes = 0x0001000100010001ull;  // one added to each 16-bit sum of a word

// One added to each of eight f16 sums in 16 bytes: one 128-bit vector reduction on sm_90.
__device__ __forceinline__ void addHalfOnes(unsigned long long* at) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned one = 0x3C003C00u;
  asm volatile("red.global.add.noftz.v4.f16x2 [%0], {%1, %1, %1, %1};" ::"l"(at), "r"(one) : "memory");
#else
  for (int k = 0; k < 4; ++k) atomicAdd(reinterpret_cast<__half2*>(at) + k, __half2(1.f, 1.f));
#endif
}

__global__ void volumePass(unsigned long long* words, size_t count, Pass pass) {
  if (pass == Pass::reduceHalves || pass == Pass::reduceHalvesThrice) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count / 2; i += size_t{gridDim.x} * blockDim.x)
      for (int k = 0; k < (pass == Pass::reduceHalves ? 1 : 3); ++k) addHalfOnes(words + 2 * i);
    return;
  }
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    switch (pass) {
      case Pass::store: words[i] = i * kFourOnes; break;
      case Pass::add: words[i] += kFourOnes; break;
      case Pass::reduce: atomicAdd(words + i, kFourOnes); break;
      case Pass::reduceThrice:
        for (int k = 0; k < 3; ++k) atomicAdd(words + i, kFourOnes);
        break;
      case Pass::reduceHalves:
      case Pass::reduceHalvesThrice: break;  // taken before the loop: a thread a pair of words
    }
  }
}

class VolumePassRun : public Run {
 public:
  VolumePassRun(size_t pixels, int disparities, Pass pass)
      : words_(pixels * disparities / 4), pass_(pass), pixels_(pixels) {
    PP_CUDA_CHECK(cudaMemset(words_.get(), 0x5a, words_.bytes()));
    blocks_ = 16 * deviceAttribute(cudaDevAttrMultiProcessorCount);
  }
  void iterate(int, StreamHandle stream) override {
    volumePass<<<blocks_, 256, 0, stream>>>(words_.get(), words_.size(), pass_);
    PP_CUDA_CHECK_LAUNCH();
  }
  double bytesMoved() const override { return (pass_ == Pass::store ? 1.0 : 2.0) * words_.bytes(); }
  double pixels() const override { return static_cast<double>(pixels_); }
  std::string note() const override {
    return "volume " + std::to_string(static_cast<int>(words_.bytes() / 1e6)) + " MB";
  }

 private:
  DeviceBuffer<unsigned long long> words_;
  Pass pass_;
  size_t pixels_;
  int blocks_ = 0;
};

// Each pass over the volumes of the stereo/sgm-half-d128-* and stereo/sgm-full-d256-* cases.
[[maybe_unused]] const bool registered = [] {
  struct Kind {
    const char* name;
    Pass pass;
    const char* what;
  };
  const Kind kinds[] = {
      {"store", Pass::store, "only stores (a first direction's write)"},
      {"add", Pass::add, "adds with plain loads and stores"},
      {"reduce", Pass::reduce, "adds with 64-bit reductions"},
      {"reduce-x3", Pass::reduceThrice, "adds three times a word with reductions (a front merged in the L2)"},
      {"reduce-f16", Pass::reduceHalves, "adds to f16 sums with 128-bit vector reductions (sm_90)"},
      {"reduce-f16-x3", Pass::reduceHalvesThrice,
       "adds three times to f16 sums with 128-bit vector reductions (sm_90)"}};
  for (bool half : {true, false})
    for (const Kind& k : kinds) {
      std::string size = half ? "half" : "full";
      registry().push_back({"stereo/volume-" + size + "-" + k.name,
                            "one pass over the " + size + "-size SGM volume that " + k.what, true,
                            [half, pass = k.pass](Size s, int) {
                              size_t pixels = half ? static_cast<size_t>(s.width / 2) * (s.height / 2)
                                                   : static_cast<size_t>(s.width) * s.height;
                              return std::make_unique<VolumePassRun>(pixels, half ? 128 : 256, pass);
                            }});
    }
  return true;
}();

}  // namespace
}  // namespace pp::bench
