// The face detector's variance normalisation as the device compiles it (rsqrtf's estimate, the
// 64-bit high products, the double fallback) against OpenCV's double on the host, bit for bit, on
// the inputs the CPU test takes (tests/unit/haar_norm_test.cpp); outputs poisoned first.
#include <gtest/gtest.h>

#include "pipeline/device_buffer.hpp"
#include "pipeline/gpu.hpp"
#include "tests/haar_norm_support.hpp"

namespace pp::faces {
namespace {

__global__ void inverseSqrts(const uint64_t* n, size_t count, float* out) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = inverseSqrt(n[i]);
}

__global__ void belowTenths(const test::TenthCase* cases, size_t count, uint8_t* out) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = belowTenth(cases[i].area, cases[i].norm) ? 1 : 0;
}

// `kernel` over `in` on the device; the results copied back.
template <class In, class Out, class Kernel> std::vector<Out> onDevice(Kernel kernel, const std::vector<In>& in) {
  DeviceBuffer<In> input(in.size());
  DeviceBuffer<Out> output(in.size());
  PP_CUDA_CHECK(cudaMemcpy(input.get(), in.data(), input.bytes(), cudaMemcpyHostToDevice));
  PP_CUDA_CHECK(cudaMemset(output.get(), 0xFF, output.bytes()));  // poison: NaN, or 255 for a bool
  kernel<<<static_cast<unsigned>((in.size() + 255) / 256), 256>>>(input.get(), in.size(), output.get());
  PP_CUDA_CHECK_LAUNCH();
  std::vector<Out> out(in.size());
  PP_CUDA_CHECK(cudaMemcpy(out.data(), output.get(), output.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

TEST(CudaHaarNorm, InverseSqrtEqualsOpenCvsDouble) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const std::vector<uint64_t> inputs = test::normInputs(uint64_t{1} << 24, 4'000'000, 2'000'000);
  const std::vector<float> got = onDevice<uint64_t, float>(inverseSqrts, inputs);
  size_t wrong = 0;
  for (size_t i = 0; i < inputs.size(); ++i) wrong += got[i] != test::openCvNorm(inputs[i]);
  EXPECT_EQ(wrong, 0u) << "of " << inputs.size();
}

TEST(CudaHaarNorm, FlatWindowTestEqualsOpenCvsDouble) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const std::vector<test::TenthCase> cases = test::tenthInputs();
  const std::vector<uint8_t> got = onDevice<test::TenthCase, uint8_t>(belowTenths, cases);
  size_t wrong = 0;
  for (size_t i = 0; i < cases.size(); ++i)
    wrong += got[i] != (static_cast<double>(cases[i].area) * cases[i].norm < 1e-1 ? 1 : 0);
  EXPECT_EQ(wrong, 0u) << "of " << cases.size();
}

}  // namespace
}  // namespace pp::faces
