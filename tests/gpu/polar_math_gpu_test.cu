// The polarizers' images as the device computes them from 8-bit samples (an approximate square
// root rounded to a multiple of 2^-12) against the host's correctly rounded root: every S1^2 + S2^2 that
// 8-bit samples can make, with every sum of four samples; outputs poisoned first.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/polar_math.hpp"
#include "pipeline/device_buffer.hpp"
#include "pipeline/gpu.hpp"

namespace pp::polar {
namespace {

constexpr int kLargestSum = 4 * 255;

struct Extremes {
  uint8_t least, most;
};

// Thread (pair, sum): the least and most passed for S1, S2 = pairs[pair] and that sum.
__global__ void extremes(const int2* pairs, int pairCount, Extremes* out) {
  const int pair = blockIdx.y * static_cast<int>(gridDim.x) + static_cast<int>(blockIdx.x);
  const int sum = static_cast<int>(threadIdx.x) + static_cast<int>(blockDim.x) * static_cast<int>(blockIdx.z);
  if (pair >= pairCount || sum > kLargestSum) return;
  const Passed passed = polarizersPass({sum, pairs[pair].x, pairs[pair].y}, Settings{}, 255);
  out[static_cast<size_t>(pair) * (kLargestSum + 1) + sum] = {static_cast<uint8_t>(passed.least),
                                                              static_cast<uint8_t>(passed.most)};
}

TEST(CudaPolarizers, EightBitExtremesEqualTheCorrectlyRoundedRootsEverywhere) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  std::vector<int2> pairs;  // S1 >= S2 >= 0: the root sees only S1^2 + S2^2
  for (int s1 = 0; s1 <= 255; ++s1)
    for (int s2 = 0; s2 <= s1; ++s2) pairs.push_back({s1, s2});
  const int count = static_cast<int>(pairs.size());
  const size_t outputs = pairs.size() * (kLargestSum + 1);
  DeviceBuffer<int2> input(pairs.size());
  DeviceBuffer<Extremes> output(outputs);
  PP_CUDA_CHECK(cudaMemcpy(input.get(), pairs.data(), input.bytes(), cudaMemcpyHostToDevice));
  PP_CUDA_CHECK(cudaMemset(output.get(), 0xAB, output.bytes()));  // poison
  constexpr unsigned kThreads = 256;
  const dim3 grid(256, (count + 255) / 256, (kLargestSum + kThreads) / kThreads);
  extremes<<<grid, kThreads>>>(input.get(), count, output.get());
  PP_CUDA_CHECK_LAUNCH();
  std::vector<Extremes> got(outputs);
  PP_CUDA_CHECK(cudaMemcpy(got.data(), output.get(), output.bytes(), cudaMemcpyDeviceToHost));

  size_t wrong = 0;
  std::string first;
  for (int p = 0; p < count; ++p)
    for (int sum = 0; sum <= kLargestSum; ++sum) {
      const Passed want = polarizersPass({sum, pairs[p].x, pairs[p].y}, Settings{}, 255);
      const Extremes& g = got[static_cast<size_t>(p) * (kLargestSum + 1) + sum];
      if (g.least == want.least && g.most == want.most) continue;
      if (wrong++ == 0)
        first = "sum " + std::to_string(sum) + ", S1 " + std::to_string(pairs[p].x) + ", S2 " +
                std::to_string(pairs[p].y) + ": device " + std::to_string(g.least) + "/" + std::to_string(g.most) +
                ", host " + std::to_string(want.least) + "/" + std::to_string(want.most);
    }
  EXPECT_EQ(wrong, 0u) << "of " << outputs << "; first " << first;
}

}  // namespace
}  // namespace pp::polar
