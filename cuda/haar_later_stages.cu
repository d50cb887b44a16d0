// The cascade's later stages, tile by tile: the windows of a tile that passed the first stage are
// listed in shared memory, the tile's integral is built again there, and each stage runs on the
// list the stage before left, the block's threads spread over its windows and their stumps.
#include "cuda/cuda_check.hpp"
#include "cuda/haar_tile.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::faces {

namespace {

constexpr int kThreadsLog2 = 8, kThreads = 1 << kThreadsLog2, kWindows = kWindowTileX * kWindowTileY;

// A stage's time is its stumps one after another, so each round of a stage gives a window as many
// lanes as the block has for the windows still to do: a thread a window while there are hundreds,
// up to a warp a window (its lanes taking every 32nd stump) once a handful is left. Windows that pass
// go to the other list; three counts in turn, so that one barrier a stage separates a list's
// writers from its readers and the count reset for the stage after.
__global__ void __launch_bounds__(kThreads, 4)
    laterStages(CascadeArgs c, PyramidArgs a, const int8_t* codes, const float* norms, Candidate* out, int* outCount,
                int capacity) {
  extern __shared__ uint32_t integral[];
  __shared__ float listNorm[2][kWindows];  // two lists of window positions with their norms
  __shared__ uint16_t list[2][kWindows];
  __shared__ int listCount[3];
  const Tile t = tileOf(a, c);
  if (threadIdx.x < 3) listCount[threadIdx.x] = 0;
  __syncthreads();
  for (int p = threadIdx.x; p < kWindows; p += kThreads) {
    TileWindow w = tileWindow(t, p);
    if (w.valid && codes[w.index] == 1) {
      int slot = atomicAdd(&listCount[0], 1);
      list[0][slot] = static_cast<uint16_t>(p), listNorm[0][slot] = norms[w.index];
    }
  }
  __syncthreads();
  if (listCount[0] == 0) return;  // the whole block
  buildIntegral<false>(integral, t);
  // Stage s reads list `from`, counted in listCount[counted], appends to the other, counted in
  // listCount[counting], and zeroes the count stage s + 1 appends to (its last reader was stage
  // s - 2); the roles turn round a stage at a time.
  int from = 0, counted = 0, counting = 1, zeroed = 2;
  for (int s = 1; s < c.stageCount; ++s) {
    const int to = from ^ 1, n = listCount[counted];
    if (threadIdx.x == 0) listCount[zeroed] = 0;
    const long long threshold = __ldg(&c.stages[s].threshold);
    // Rounds the same for every thread, so that whole warps reach the shuffles.
    for (int base = 0, perRound; base < n; base += perRound) {
      // 2^shift lanes a window: the most, up to a warp, that the m windows left leave room for (a
      // round's last few windows share the threads the others no longer need): m 2^shift <= kThreads,
      // so shift = log2(kThreads) - ceil(log2(m)), without a division.
      const int shift = max(0, min(5, __clz(n - base - 1) - (32 - kThreadsLog2)));
      const int lanes = 1 << shift, lane = threadIdx.x & (lanes - 1);
      perRound = kThreads >> shift;
      const int i = base + (static_cast<int>(threadIdx.x) >> shift);
      long long total = 0;
      if (i < n) {
        TileWindow w = tileWindow(t, list[from][i]);
        total = stageSum(c, s, integral + w.y * t.pitch + w.x, listNorm[from][i], lane, lanes);
      }
      switch (shift) {  // the window's lanes' sums added (the same case for the whole block)
        case 5: total += __shfl_xor_sync(0xFFFFFFFFu, total, 16); [[fallthrough]];
        case 4: total += __shfl_xor_sync(0xFFFFFFFFu, total, 8); [[fallthrough]];
        case 3: total += __shfl_xor_sync(0xFFFFFFFFu, total, 4); [[fallthrough]];
        case 2: total += __shfl_xor_sync(0xFFFFFFFFu, total, 2); [[fallthrough]];
        case 1: total += __shfl_xor_sync(0xFFFFFFFFu, total, 1); [[fallthrough]];
        default: break;
      }
      if (i < n && lane == 0 && total >= threshold) {
        int slot = atomicAdd(&listCount[counting], 1);
        list[to][slot] = list[from][i], listNorm[to][slot] = listNorm[from][i];
      }
    }
    __syncthreads();
    if (listCount[counting] == 0) return;  // the whole block
    const int turned = counted;
    from = to, counted = counting, counting = zeroed, zeroed = turned;
  }
  const int last = from, n = listCount[counted];
  for (int i = threadIdx.x; i < n; i += kThreads) {
    int p = list[last][i];
    int slot = atomicAdd(outCount, 1);
    if (slot < capacity)
      out[slot] = {static_cast<uint16_t>(t.level), static_cast<uint16_t>((t.col0 + p % kWindowTileX) * t.step),
                   static_cast<uint16_t>((t.row0 + p / kWindowTileX) * t.step), listNorm[last][i]};
  }
}

}  // namespace

void launchLaterStages(const CascadeArgs& c, const PyramidArgs& a, const int8_t* codes, const float* norms,
                       Candidate* out, int* outCount, int capacity, cudaStream_t stream) {
  if (a.windowTiles == 0) return;
  size_t shared = sizeof(uint32_t) * tilePitch(c.windowWidth) * tileRows(c.windowHeight);
  allowSharedMemory(laterStages, shared, "face_detect's later stages");
  laterStages<<<a.windowTiles, kThreads, shared, stream>>>(c, a, codes, norms, out, outCount, capacity);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
