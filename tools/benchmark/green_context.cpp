#include "tools/benchmark/green_context.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "cuda/cuda_check.hpp"

// cudaGetDriverEntryPointByVersion came with CUDA 12.5 (a Jetson's older toolkits build the rest).
#if CUDART_VERSION >= 12050
#include <cuda.h>
#include <cudaTypedefs.h>
#define POLARPIPE_GREEN_CONTEXTS 1
#endif

namespace pp::bench {

#ifdef POLARPIPE_GREEN_CONTEXTS
namespace {

// A driver function through the runtime, so that the bench needs no link to libcuda: the version
// this header's types were written for.
template <class F> F driverFunction(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  PP_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &function, CUDA_VERSION, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !function)
    throw std::runtime_error(std::string("--sms: this CUDA driver has no ") + name +
                             " (green contexts need a driver of CUDA 12.4 or later)");
  return reinterpret_cast<F>(function);
}

void check(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS)
    throw std::runtime_error(std::string("--sms: ") + call + " failed (CUresult " + std::to_string(result) + ")");
}

}  // namespace

int runOnMultiprocessors(int sms) {
  // The primary context first, as the driver asks (the green context retains it).
  int ordinal = 0;
  PP_CUDA_CHECK(cudaGetDevice(&ordinal));
  PP_CUDA_CHECK(cudaFree(nullptr));
  const auto deviceGet = driverFunction<PFN_cuDeviceGet_v2000>("cuDeviceGet");
  const auto getResource = driverFunction<PFN_cuDeviceGetDevResource_v12040>("cuDeviceGetDevResource");
  const auto split = driverFunction<PFN_cuDevSmResourceSplitByCount_v12040>("cuDevSmResourceSplitByCount");
  const auto describe = driverFunction<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc");
  const auto create = driverFunction<PFN_cuGreenCtxCreate_v12040>("cuGreenCtxCreate");
  const auto asContext = driverFunction<PFN_cuCtxFromGreenCtx_v12040>("cuCtxFromGreenCtx");
  const auto setCurrent = driverFunction<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent");

  CUdevice device{};
  check(deviceGet(&device, ordinal), "cuDeviceGet");
  CUdevResource all{}, part{}, rest{};
  check(getResource(device, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  if (static_cast<unsigned>(sms) > all.sm.smCount)
    throw std::runtime_error("--sms " + std::to_string(sms) + ": this GPU has " + std::to_string(all.sm.smCount) +
                             " SMs");
  unsigned groups = 1;
  check(split(&part, &groups, &all, &rest, 0, static_cast<unsigned>(sms)), "cuDevSmResourceSplitByCount");
  if (groups != 1) throw std::runtime_error("--sms " + std::to_string(sms) + ": the driver made no group of that size");
  CUdevResourceDesc description{};
  check(describe(&description, &part, 1), "cuDevResourceGenerateDesc");
  CUgreenCtx green{};  // lives as long as the process
  check(create(&green, description, device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  CUcontext context{};
  check(asContext(&context, green), "cuCtxFromGreenCtx");
  check(setCurrent(context), "cuCtxSetCurrent");
  return static_cast<int>(part.sm.smCount);
}
#else
int runOnMultiprocessors(int) {
  throw std::runtime_error("--sms: this build's CUDA " + std::to_string(CUDART_VERSION) +
                           " has no green contexts' entry points (CUDA 12.5 or later)");
}
#endif

}  // namespace pp::bench
