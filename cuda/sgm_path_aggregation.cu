// Path aggregation: one warp per line of one direction (a row, a column or a diagonal), adding
// its path costs to the 16-bit sum volume (the first direction writes it).
#include "cuda/sgm_path.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::stereo {

namespace {

constexpr int kWarpsPerBlock = 4;

// Lines of a direction and where each enters the image.
__host__ __device__ inline int lineCount(int dx, int dy, int width, int height) {
  return dy == 0 ? height : dx == 0 ? width : width + height - 1;
}
__device__ inline void lineStart(int line, int dx, int dy, int width, int height, int& x, int& y) {
  if (dy == 0) {
    x = dx > 0 ? 0 : width - 1, y = line;
  } else if (dx == 0 || line < width) {
    x = line, y = dy > 0 ? 0 : height - 1;
  } else {  // a diagonal entering through the side column
    int j = line - width + 1;
    x = dx > 0 ? 0 : width - 1, y = dy > 0 ? j : height - 1 - j;
  }
}

template <int D>
__global__ void aggregate(SgmParams p, SgmBuffers b, int dx, int dy, bool first) {
  constexpr int K = D / 32;
  int line = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (line >= lineCount(dx, dy, b.width, b.height)) return;  // whole warps
  int x, y;
  lineStart(line, dx, dy, b.width, b.height, x, y);
  int prev[K], minPrev = 0;
  for (bool head = true; x >= 0 && x < b.width && y >= 0 && y < b.height; head = false, x += dx, y += dy) {
    pathStep<K>(p, b, x, y, dx, dy, head, lane, prev, minPrev);
    uint16_t* sums = b.volume + (static_cast<size_t>(y) * b.width + x) * D + lane * K;
    int total[K];
    if (first) {
#pragma unroll
      for (int j = 0; j < K; ++j) total[j] = prev[j];
    } else {
      loadSums<K>(sums, total);
#pragma unroll
      for (int j = 0; j < K; ++j) total[j] += prev[j];
    }
    storeSums<K>(sums, total);
  }
}

template <int D> void launch(const SgmParams& p, const SgmBuffers& b, int dx, int dy, bool first, cudaStream_t stream) {
  int lines = lineCount(dx, dy, b.width, b.height);
  aggregate<D><<<(lines + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(p, b, dx, dy, first);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchPathAggregation(const SgmParams& p, const SgmBuffers& b, int dx, int dy, bool first, cudaStream_t stream) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, dx, dy, first, stream);
    case 128: return launch<128>(p, b, dx, dy, first, stream);
    case 256: return launch<256>(p, b, dx, dy, first, stream);
    default: throw std::invalid_argument("SGM: disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
