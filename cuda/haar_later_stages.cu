// The cascade's later stages, tile by tile: the windows of a tile that passed the first stage are
// listed in shared memory, the tile's integral is built again there, and groups of stages run on
// the list, each group on the survivors of the one before.
#include "cuda/cuda_check.hpp"
#include "cuda/haar_tile.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::faces {

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32, kWindows = kWindowTileX * kWindowTileY;
// Stage groups after the first, each on the survivors of the one before. The first
// kGroupsByThread (short stages that most windows reach) take a thread a window and a stage each,
// so that no lane waits for its neighbours' later stages; the later ones a warp a window, so a
// stage of 200 stumps takes 7 rounds instead of 200 while few windows are left.
__device__ constexpr int groupEnd(int group) {
  return group < 5 ? group + 2 : group == 5 ? 10 : group == 6 ? 16 : 1 << 30;
}
constexpr int kGroupsByThread = 5;

__global__ void __launch_bounds__(kThreads, 4)
    laterStages(CascadeArgs c, PyramidArgs a, const int8_t* codes, const float* norms, Candidate* out, int* outCount,
                int capacity) {
  // Dynamic shared memory: the integral, then two lists of window positions with their norms.
  extern __shared__ uint32_t integral[];
  __shared__ int listCount[2];
  const Tile t = tileOf(a, c);
  float(*listNorm)[kWindows] =
      reinterpret_cast<float(*)[kWindows]>(integral + tilePitch(c.windowWidth) * tileRows(c.windowHeight));
  uint16_t(*list)[kWindows] = reinterpret_cast<uint16_t(*)[kWindows]>(listNorm + 2);
  if (threadIdx.x == 0) listCount[0] = 0;
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
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int cur = 0;
  for (int group = 0, from = 1; from < c.stageCount; from = groupEnd(group++)) {
    const int to = min(groupEnd(group), c.stageCount), n = listCount[cur];
    if (threadIdx.x == 0) listCount[1 - cur] = 0;
    __syncthreads();
    const bool byThread = group < kGroupsByThread;
    for (int i = byThread ? threadIdx.x : warp; i < n; i += byThread ? kThreads : kWarps) {
      int p = list[cur][i];
      TileWindow w = tileWindow(t, p);
      const uint32_t* at = integral + w.y * t.pitch + w.x;
      float norm = listNorm[cur][i];
      bool passed = true;
      for (int s = from; s < to && passed; ++s)
        passed = byThread ? stagePasses<1>(c, s, at, norm, 0) : stagePasses<32>(c, s, at, norm, lane);
      if (passed && (byThread || lane == 0)) {
        int slot = atomicAdd(&listCount[1 - cur], 1);
        list[1 - cur][slot] = static_cast<uint16_t>(p), listNorm[1 - cur][slot] = norm;
      }
    }
    __syncthreads();
    cur = 1 - cur;
    if (listCount[cur] == 0) return;  // the whole block
  }
  for (int i = threadIdx.x; i < listCount[cur]; i += kThreads) {
    int p = list[cur][i];
    int slot = atomicAdd(outCount, 1);
    if (slot < capacity)
      out[slot] = {static_cast<uint16_t>(t.level), static_cast<uint16_t>((t.col0 + p % kWindowTileX) * t.step),
                   static_cast<uint16_t>((t.row0 + p / kWindowTileX) * t.step), listNorm[cur][i]};
  }
}

}  // namespace

void launchLaterStages(const CascadeArgs& c, const PyramidArgs& a, const int8_t* codes, const float* norms,
                       Candidate* out, int* outCount, int capacity, cudaStream_t stream) {
  if (a.windowTiles == 0) return;
  size_t shared = sizeof(uint32_t) * tilePitch(c.windowWidth) * tileRows(c.windowHeight) +
                  (sizeof(float) + sizeof(uint16_t)) * 2 * kWindows;
  allowSharedMemory(laterStages, shared, "face_detect's later stages");
  laterStages<<<a.windowTiles, kThreads, shared, stream>>>(c, a, codes, norms, out, outCount, capacity);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::faces
