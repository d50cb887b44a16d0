// Path aggregation: one warp per walker (a row, or a column whose diagonal wraps around) of every
// direction, adding its path costs to the 16-bit sum volume.
#include "cuda/sgm_path.cuh"

#include "pipeline/cuda_check.hpp"

namespace pp::stereo {

namespace {

constexpr int kWarpsPerBlock = 4;

// Walkers of a direction and where each enters the image. A row walker takes a row; a column or
// diagonal walker takes a column and walks every row, a diagonal one wrapping to the other side
// (where a new line starts), so that all walkers of the directions from the top (or bottom) are on
// the same row at the same step.
__host__ __device__ inline int lineCount(int dy, int width, int height) { return dy == 0 ? height : width; }
__device__ inline void lineStart(int line, int dx, int dy, int width, int height, int& x, int& y) {
  if (dy == 0) x = dx > 0 ? 0 : width - 1, y = line;
  else x = line, y = dy > 0 ? 0 : height - 1;
}

// The directions of one launch: the warps of direction i are those from firstWarp[i] on.
struct Directions {
  int count;
  int dx[8], dy[8], firstWarp[9];
};

// Every direction at once, a warp per walker: the walkers of all directions run concurrently (one
// direction alone has too few to fill the device), so each adds its path costs to the zeroed
// volume with reductions. Four 16-bit sums share a 64-bit word (two where D is 64) and never carry
// into each other (a sum stays below 8 x 255).
template <int D>
__global__ void aggregate(SgmParams p, SgmBuffers b, Directions dirs) {
  constexpr int K = D / 32, kRound = kStepsPerRound<K>;
  int warp = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp >= dirs.firstWarp[dirs.count]) return;  // whole warps
  int which = 0;
  while (warp >= dirs.firstWarp[which + 1]) ++which;
  int dx = dirs.dx[which], dy = dirs.dy[which], x0, y0;
  lineStart(warp - dirs.firstWarp[which], dx, dy, b.width, b.height, x0, y0);
  int steps = dy == 0 ? b.width : b.height;
  bool wraps = dx != 0 && dy != 0;
  int lineFirstX = dx > 0 ? 0 : b.width - 1;  // where a wrapped diagonal starts again
  // The column after x: a diagonal leaving the image comes back on the other side.
  auto next = [&](int x) {
    x += dx;
    return wraps && (x == b.width || x < 0) ? lineFirstX : x;
  };
  auto startsLine = [&](int s, int x) { return s == 0 || (wraps && x == lineFirstX); };
  int prev[K], minPrev = 0, x = x0;  // x: the column of the round's first step
  for (int s0 = 0; s0 < steps; s0 += kRound) {
    StepInput<K> in[kRound];
    int xc = x;
#pragma unroll
    for (int c = 0; c < kRound; ++c, xc = next(xc)) {
      int s = s0 + c;
      if (s >= steps) break;
      stepInput<K>(p, b, xc, y0 + s * dy, dx, dy, startsLine(s, xc), lane, in[c]);
    }
#pragma unroll
    for (int c = 0; c < kRound; ++c, x = next(x)) {
      int s = s0 + c, y = y0 + s * dy;
      if (s >= steps) break;
      stepRecurse<K>(p, in[c], startsLine(s, x), lane, prev, minPrev);
      uint16_t* sums = b.volume + (static_cast<size_t>(y) * b.width + x) * D + lane * K;
      if constexpr (K >= 4) {
        auto* words = reinterpret_cast<unsigned long long*>(sums);
#pragma unroll
        for (int j = 0; j < K; j += 4)
          atomicAdd(words + j / 4, static_cast<unsigned long long>(prev[j]) | static_cast<unsigned long long>(prev[j + 1]) << 16 | static_cast<unsigned long long>(prev[j + 2]) << 32 |
                                       static_cast<unsigned long long>(prev[j + 3]) << 48);
      } else {
        atomicAdd(reinterpret_cast<unsigned*>(sums), static_cast<unsigned>(prev[0]) | static_cast<unsigned>(prev[1]) << 16);
      }
    }
  }
}

template <int D> void launch(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream) {
  // The directions from the top first, then those from the bottom, then the rows: the blocks are
  // started in that order, so each front's walkers run together and add into rows the L2 holds.
  Directions dirs{0, {}, {}, {0}};
  for (int dy : {1, -1, 0})
    for (int i = 0; i < p.paths; ++i) {
      if (kPathDirections[i][1] != dy) continue;
      int k = dirs.count++;
      dirs.dx[k] = kPathDirections[i][0], dirs.dy[k] = dy;
      dirs.firstWarp[k + 1] = dirs.firstWarp[k] + lineCount(dy, b.width, b.height);
    }
  PP_CUDA_CHECK(cudaMemsetAsync(b.volume, 0, static_cast<size_t>(b.width) * b.height * D * sizeof(uint16_t), stream));
  int warps = dirs.firstWarp[p.paths];
  aggregate<D><<<(warps + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(p, b, dirs);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchPathAggregation(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, stream);
    case 128: return launch<128>(p, b, stream);
    case 256: return launch<256>(p, b, stream);
    default: throw std::invalid_argument("SGM: disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
