// tools/bench case demosaic/bytes-only: a kernel that only moves rggb8-angles' bytes (the raw frame
// read once, three times its size written, 16 bytes a thread), so the demosaic's share of copy
// bandwidth can be read against what one launch of this size reaches at all.
#include "pipeline/device_buffer.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::bench {
namespace {

__global__ void moveBytes(const uint4* __restrict__ in, uint4* __restrict__ out, size_t inChunks, size_t outChunks) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < outChunks; i += size_t{gridDim.x} * blockDim.x)
    out[i] = in[i % inChunks];
}

class BytesOnlyRun : public Run {
 public:
  BytesOnlyRun(Size size, int sets) : inChunks_(static_cast<size_t>(size.width / 4 * 4) * (size.height / 4 * 4) / 16) {
    in_ = DeviceBuffer<uint4>(inChunks_ * sets);
    out_ = DeviceBuffer<uint4>(3 * inChunks_ * sets);
    PP_CUDA_CHECK(cudaMemset(in_.get(), 0x5a, in_.bytes()));
  }
  void iterate(int index, StreamHandle stream) override {
    size_t outChunks = 3 * inChunks_;
    int blocks = static_cast<int>((outChunks / 4 + 127) / 128);  // four chunks a thread
    moveBytes<<<blocks, 128, 0, stream>>>(in_.get() + index * inChunks_, out_.get() + index * outChunks, inChunks_,
                                          outChunks);
    PP_CUDA_CHECK_LAUNCH();
  }
  double bytesMoved() const override { return 4.0 * 16 * inChunks_; }
  double pixels() const override { return 16.0 * inChunks_; }

 private:
  size_t inChunks_;
  DeviceBuffer<uint4> in_, out_;
};

[[maybe_unused]] const Register registered{
    {"demosaic/bytes-only",
     "only the bytes of rggb8-angles moved (raw read once, 3x written): the ceiling for one launch", true,
     [](Size size, int sets) { return std::make_unique<BytesOnlyRun>(size, sets); }}};

}  // namespace
}  // namespace pp::bench
