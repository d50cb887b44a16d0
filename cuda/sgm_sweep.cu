// The six directions from above and from below (8 paths) in two sweeps, one down the image and
// one up, each carrying its three directions (straight, from the left, from the right) together,
// so that a pixel's three path costs are summed on chip and reach the volume as one reduction
// instead of three. A block takes a band of columns and walks every row of it, one barrier a row:
// each column's path costs of the row before wait in shared memory (bytes: a path cost is at most
// 255), where the next row's columns, and their neighbours for the diagonals, read them: two
// buffers, the row's and the row before's, or, where the shared memory holds only one (Xavier), a
// ring a direction that turns a slot a row (see ringSlot). A band's
// diagonals need the columns beside it: the block also walks kGhost columns on each side, whose
// diagonal costs grow wrong one column a row from the outside in (they lack their own neighbours),
// so that after kGhost rows the band's own columns are still exact; then each band hands its
// neighbours its edge columns' costs through global memory and takes theirs, and the ghosts start
// again from them. Bands wait only for their two neighbours, every kGhost rows; every band of a
// launch must be resident at once, so it is a cooperative launch: both sweeps in one where the
// device holds both sweeps' bands, else one sweep a launch (see plan). A row's matching costs come
// from the census codes, staged in shared memory a row ahead, at every disparity count (at 256 the
// walk from the left also stores them above the sums, for the walkers where the sweeps do not run).
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#include "cuda/sgm_path.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::stereo {

namespace {

constexpr int kThreads = 256;
constexpr int kGhost = 8;  // ghost columns each side, and rows between handoffs
constexpr int kLaneD = 16, kRun = 4, kRuns = kLaneD / kRun;
constexpr int kDirections = 3;  // dx = 0, +1 (from the left), -1 (from the right)
__host__ __device__ constexpr int dxOf(int direction) { return direction == 0 ? 0 : direction == 1 ? 1 : -1; }

// Where a direction's ring keeps slot `slot`'s costs of row i among `slots` places: moved dx places
// a row, so that slot s of row i takes the place of its predecessor s - dx of row i - 1 (`turn`: i mod
// slots). Each lane of a column reads its predecessor's 16 costs and writes its own at one place,
// which no other lane touches in the row: one buffer, not one for the row before and one for the row.
// Its wrap costs instructions a direction, so it is only for where two buffers do not fit.
template <int dx> __device__ __forceinline__ int ringSlot(int slot, int turn, int slots) {
  if constexpr (dx > 0) {
    const int at = slot - turn;
    return at < 0 ? at + slots : at;
  } else if constexpr (dx < 0) {
    const int at = slot + turn;
    return at >= slots ? at - slots : at;
  } else {
    return slot;
  }
}

template <int D> struct Lanes {
  static constexpr int kLanes = D / kLaneD;           // a column's lanes
  static constexpr int kWorkers = kThreads / kLanes;  // columns a block walks at once
  static constexpr int kPerWarp = 32 / kLanes;        // columns a warp walks at once
  static constexpr int kRunStride = D / kRuns;
};

// A row's census codes in shared memory: the right image's from the match of the band's first
// slot at the largest disparity on, then the left image's of the slots; each thread loads at most
// kCodesPerThread of them a row ahead.
constexpr int kCodesPerThread = 4;
template <int D> constexpr int windowCodes(int slots) { return slots + D - 1 + slots; }

// A handoff entry: one column's path costs of one direction (D bytes), then its minimum.
template <int D> constexpr int kEntryBytes = D + 16;

// The flag a band sets when its edge columns of rows up to handoff k are out, for frame `epoch`.
// (epoch: 1..65535, so that a flag left from the frame before never matches.)
__host__ __device__ constexpr unsigned flagOf(unsigned epoch, int k) {
  return epoch << 16 | static_cast<unsigned>(k + 1);
}

__device__ __forceinline__ unsigned loadAcquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void storeRelease(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

struct SweepArgs {
  int bands, bandWidth, slots;  // slots: bandWidth + 2 kGhost columns
  int firstSweep;               // of the blocks' sweeps (blockIdx.x / bands on from it): 0 down, 1 up
  uint8_t* handoff;             // [sweep][band][handoff parity][edge][kGhost] entries
  unsigned* flags;              // [sweep][band]
  unsigned epoch;
};

// Blocks an SM the registers must allow, where the plan puts two bands on every SM (one of each
// sweep, or two of one). Without paired path costs (before sm_80) the code needs more registers
// than two blocks leave (sm_72 spills), so there one block: the plan then puts one band an SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kMinBlocks = 1;
#else
constexpr int kMinBlocks = 2;
#endif

// Shared memory a block needs: each direction's costs (two buffers, or a ring), their minima (two
// buffers), the spare entry and the codes of two rows.
template <int D> size_t sharedBytesOf(int slots, bool ring) {
  return static_cast<size_t>(kDirections) * slots * ((ring ? 1 : 2) * D + 2 * sizeof(int)) + kEntryBytes<D> +
         2 * sizeof(uint32_t) * windowCodes<D>(slots);
}

template <int D, bool kRing> __global__ void __launch_bounds__(kThreads, kMinBlocks)
    sweep(SgmParams p, SgmBuffers b, SweepArgs a) {
  using L = Lanes<D>;
  static_assert(kGhost % L::kPerWarp == 0, "ghosts of whole warps");
  extern __shared__ uint32_t shared[];
  uint8_t* costs = reinterpret_cast<uint8_t*>(shared);  // [direction][buffer][slot][D], or [direction][ringSlot][D]
  // A spare entry, where a slot outside the image stores its costs and minimum, so that the stores
  // need no branch.
  uint8_t* spare = costs + kDirections * (kRing ? 1 : 2) * a.slots * D;
  int* minima = reinterpret_cast<int*>(spare + kEntryBytes<D>);  // [direction][buffer][slot or ringSlot]
  const int codes = windowCodes<D>(a.slots), leftCodes = a.slots + D - 1;
  uint32_t* window = reinterpret_cast<uint32_t*>(minima + kDirections * 2 * a.slots);  // [buffer][codes]
  const int sweepIndex = a.firstSweep + blockIdx.x / a.bands, band = blockIdx.x % a.bands,
            dy = sweepIndex == 0 ? 1 : -1;
  const int x0 = band * a.bandWidth, first = x0 - kGhost;  // the band's first column, its first slot's
  const WalkerLane<L::kLanes> place(threadIdx.x % 32);
  const int worker = threadIdx.x / L::kLanes, part = place.part;
  const int width = b.width, height = b.height;
  auto entry = [&](int whichBand, int parity, int edge, int index) {
    return a.handoff +
           ((((static_cast<size_t>(sweepIndex) * a.bands + whichBand) * 2 + parity) * 2 + edge) * kGhost + index) *
               kEntryBytes<D>;
  };
  unsigned* myFlag = a.flags + sweepIndex * a.bands + band;
  // Row i's codes: staged in registers during row i - 1, stored to window[i & 1] at its end.
  uint32_t staged[kCodesPerThread];
  auto fetch = [&](int i) {
    if (i >= height) return;
    const size_t row = static_cast<size_t>(dy > 0 ? i : height - 1 - i) * width;
#pragma unroll
    for (int k = 0; k < kCodesPerThread; ++k) {
      const int c = threadIdx.x + k * kThreads;
      const bool right = c < leftCodes;
      const int column = min(max(right ? first - p.minDisparity - (D - 1) + c : first + c - leftCodes, 0), width - 1);
      if (c < codes) staged[k] = __ldg((right ? b.censusRight : b.censusLeft) + row + column);
    }
  };
  auto store = [&](int i) {
    if (i >= height) return;
#pragma unroll
    for (int k = 0; k < kCodesPerThread; ++k) {
      const int c = threadIdx.x + k * kThreads;
      if (c < codes) window[(i & 1) * codes + c] = staged[k];
    }
  };
  fetch(0);
  store(0);
  __syncthreads();

  // Where the rings stand: i mod slots at row i.
  for (int i = 0, turn = 0; i < height; ++i, turn = turn + 1 == a.slots ? 0 : turn + 1) {
    // `written`, `read`: the buffers of this row's codes, costs and minima and of the row before's.
    const int y = dy > 0 ? i : height - 1 - i, written = i & 1, read = written ^ 1;
    const bool refresh = i > 0 && i % kGhost == 0, publish = (i + 1) % kGhost == 0 && i + 1 < height;
    const int handoffIn = i / kGhost - 1;  // at a refresh: the handoff the neighbours made a row ago
    fetch(i + 1);
    if (refresh) {
      if (threadIdx.x == 0) {
        const unsigned want = flagOf(a.epoch, handoffIn);
        for (int side = -1; side <= 1; side += 2) {
          const int other = band + side;
          if (other < 0 || other >= a.bands) continue;
          const unsigned* flag = a.flags + sweepIndex * a.bands + other;
          unsigned seen;
          while (((seen = loadAcquire(flag)) >> 16) != a.epoch || seen < want) __nanosleep(64);
        }
      }
      __syncthreads();
    }
    const uint32_t* rowCodes = window + written * codes;
    // A row's slots, made once for the refresh rows (the ghosts' predecessors from the neighbours'
    // handoffs) and once for the others, so that those carry none of the handoffs' tests.
    auto walkRow = [&](auto refreshRow) {
      constexpr bool kRefresh = decltype(refreshRow)::value;
      for (int base = 0; base < a.slots; base += L::kWorkers) {
        const int slot = base + worker, x = first + slot;
        // Whether the slot is a ghost, the same for a warp's columns (the band and its ghosts are whole
        // warps).
        const int warpSlot = base + worker / L::kPerWarp * L::kPerWarp;
        if (warpSlot >= a.slots) break;
        const bool leftGhost = warpSlot < kGhost, rightGhost = warpSlot >= kGhost + a.bandWidth;
        const bool active = slot < a.slots && x >= 0 && x < width;
        const bool own = active && !leftGhost && !rightGhost;
        const int xs = min(max(x, 0), width - 1);  // for loads where the slot is inactive
        // The matching costs: run q's disparity i at offset q * kRunStride + i from firstD.
        const int firstD = part * kRun;
        const int room = xs - p.minDisparity - firstD;
        const uint32_t centre = rowCodes[leftCodes + slot];
        const uint32_t* right = rowCodes + slot + D - 1 - firstD;  // the match at offset o is right[-o]
        int cost[kRuns][kRun];
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int k = 0; k < kRun; ++k) {
            const int offset = q * L::kRunStride + k;
            cost[q][k] = room >= offset ? __popc(centre ^ right[-offset]) : kOutsideCost;
          }
        // The matching costs, laid out as the path costs (pairs of 16-bit halves where kPairedCosts,
        // else one a register), and the three directions' sum, in pairs on every device (as the
        // volume takes it).
        constexpr int kWords = kPairedCosts ? 2 : kRun;
        uint32_t matching[kRuns][kWords], sum[kRuns][2] = {};
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int j = 0; j < kWords; ++j)
            matching[q][j] = kPairedCosts ? __byte_perm(cost[q][2 * j], cost[q][2 * j + 1], 0x5410) : cost[q][j];
        // Each direction's P2, before the directions, so that their code has no branch to split it.
        int p2s[kDirections];
#pragma unroll
        for (int direction = 0; direction < kDirections; ++direction) p2s[direction] = p.p2;
        if (p.p2Adaptive && i > 0) {
          const int intensity = b.left.row(y)[xs];
#pragma unroll
          for (int direction = 0; direction < kDirections; ++direction) {
            const int px = min(max(xs - dxOf(direction), 0), width - 1);
            p2s[direction] = adaptiveP2(p, abs(intensity - static_cast<int>(b.left.row(y - dy)[px])));
          }
        }
        // A direction's step, with no branch (outside the refresh rows' handoffs), so that the band's
        // warps take their three directions as one straight run of code the scheduler can overlap.
        auto walkDirection = [&](auto directionConstant) {
          constexpr int direction = decltype(directionConstant)::value, dx = dxOf(direction);
          const int px = xs - dx, predecessor = slot - dx;
          const bool start = i == 0 || px < 0 || px >= width;
          // Where the predecessor's costs are: the neighbouring band's handoff at a refresh row, when
          // it is one of that band's columns, else the block's own row before. None at a line's start,
          // nor where the slot is a ghost's outermost (its predecessor is unknown; its costs are never
          // used): the path cost is then the matching cost (previous costs, minimum and P2 all 0).
          const bool fromLeft = kRefresh && dx > 0 && predecessor < kGhost,
                     fromRight = kRefresh && dx < 0 && predecessor >= kGhost + a.bandWidth;
          const bool handoff = fromLeft || fromRight;  // written by another block: from the L2
          const int index = fromLeft ? predecessor : predecessor - kGhost - a.bandWidth;  // in the handoff
          const bool known =
              active && !start && (handoff ? index >= 0 && index < kGhost : predecessor >= 0 && predecessor < a.slots);
          // The lane's 16 previous costs, a byte each, and their minimum: loaded from a valid place
          // whether known or not, then zero where not.
          uint4 v;
          int minPrev;
          // Where the predecessor's costs and minimum are, and where the slot's go.
          const int at = kRing ? ringSlot<dx>(slot, turn, a.slots) : slot;
          const int costsFrom = kRing ? direction * a.slots + at
                                      : (direction * 2 + read) * a.slots + min(max(predecessor, 0), a.slots - 1);
          const int costsTo = kRing ? costsFrom : (direction * 2 + written) * a.slots + slot;
          const int minimumFrom = kRing ? (direction * 2 + read) * a.slots + at : costsFrom;
          const int minimumTo = kRing ? (direction * 2 + written) * a.slots + at : costsTo;
          if (handoff && known) {
            const uint8_t* from = entry(band + (fromLeft ? -1 : 1), handoffIn & 1, fromLeft ? 0 : 1, index);
            v = __ldcg(reinterpret_cast<const uint4*>(from + part * 16));
            minPrev = __ldcg(reinterpret_cast<const int*>(from + D));
          } else {
            v = *reinterpret_cast<const uint4*>(costs + costsFrom * D + part * 16);
            minPrev = minima[minimumFrom];
          }
          const uint32_t words[kRuns] = {known ? v.x : 0u, known ? v.y : 0u, known ? v.z : 0u, known ? v.w : 0u};
          minPrev = known ? minPrev : 0;
          const int p2 = known ? p2s[direction] : 0;
          uint32_t prev[kRuns][kWords];
#pragma unroll
          for (int q = 0; q < kRuns; ++q)
#pragma unroll
            for (int j = 0; j < kWords; ++j)
              prev[q][j] = kPairedCosts ? __byte_perm(words[q], 0, j ? 0x4342 : 0x4140) : words[q] >> (8 * j) & 0xFF;
          uint32_t next[kRuns][kWords];
          const int lowest = pathStep<kPairedCosts, L::kLanes, kRuns>(prev, matching, place, p.p1, minPrev, p2, next);
          uint32_t packed[kRuns];
#pragma unroll
          for (int q = 0; q < kRuns; ++q) {
            packed[q] = kPairedCosts ? __byte_perm(next[q][0], next[q][1], 0x6420)
                                     : next[q][0] | next[q][1] << 8 | next[q][2] << 16 | next[q][3] << 24;
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              if constexpr (kPairedCosts)
                sum[q][j] += next[q][j];
              else
                sum[q][j] += next[q][2 * j] | next[q][2 * j + 1] << 16;
            }
          }
          *reinterpret_cast<uint4*>((active ? costs + costsTo * D : spare) + part * 16) =
              make_uint4(packed[0], packed[1], packed[2], packed[3]);
          *(active ? minima + minimumTo : reinterpret_cast<int*>(spare + D)) = lowest;  // the column's lanes alike
        };
        // The left ghosts walk only the direction from the left, the right ones only that from the right.
        if (leftGhost) {
          walkDirection(std::integral_constant<int, 1>{});
        } else if (rightGhost) {
          walkDirection(std::integral_constant<int, 2>{});
        } else {
          walkDirection(std::integral_constant<int, 0>{});
          walkDirection(std::integral_constant<int, 1>{});
          walkDirection(std::integral_constant<int, 2>{});
        }
        if (own) {
          uint16_t* at = b.volume + (static_cast<size_t>(y) * width + x) * D + firstD;
#pragma unroll
          for (int q = 0; q < kRuns; ++q) addToVolume(at + q * L::kRunStride, sum[q][0], sum[q][1]);
        }
      }
    };
    if (refresh)
      walkRow(std::true_type{});
    else
      walkRow(std::false_type{});
    store(i + 1);
    __syncthreads();
    if (publish) {
      // The band's edge columns for its neighbours, from this row's costs: the rightmost kGhost own
      // columns' from the left (direction 1, edge 0), the leftmost kGhost's from the right (2, 1).
      constexpr int kChunks = D / 16;  // a lane's 16 bytes each
      for (int t = threadIdx.x; t < 2 * kGhost * kChunks; t += kThreads) {
        const int edge = t / (kGhost * kChunks), index = t / kChunks % kGhost, chunk = t % kChunks;
        const int slot = edge == 0 ? a.bandWidth + index : kGhost + index;
        const int place = !kRing      ? slot
                          : edge == 0 ? ringSlot<1>(slot, turn, a.slots)
                                      : ringSlot<-1>(slot, turn, a.slots);
        const int direction = edge + 1, at = (direction * 2 + written) * a.slots + place;
        uint8_t* e = entry(band, (i / kGhost) & 1, edge, index);
        __stcg(reinterpret_cast<uint4*>(e) + chunk,
               reinterpret_cast<const uint4*>(costs + (kRing ? direction * a.slots + place : at) * D)[chunk]);
        if (chunk == 0) __stcg(reinterpret_cast<int*>(e + D), minima[at]);
      }
      // The edge columns out before the flag says so: the barrier orders every thread's stores before
      // thread 0's release, which is cumulative, so no thread fences (a fence would wait for its
      // reductions to the volume too).
      __syncthreads();
      if (threadIdx.x == 0) storeRelease(myFlag, flagOf(a.epoch, i / kGhost));
    }
  }
}

// No plan, and why not.
SweepPlan without(std::string why) {
  SweepPlan s;
  s.without = std::move(why);
  return s;
}

// Bands of at least kGhost columns, every band of a launch resident: the first of these the SMs
// hold, each with two buffers of costs where they fit, else a ring: two bands an SM, one of each
// sweep in one launch; two an SM of one sweep a launch, in bands half as wide (Xavier: 96 KB of
// shared memory); one an SM (where the registers allow no more). The shared memory an SM has is the
// planned device's (cuda/device.hpp).
template <int D> SweepPlan plan(const SgmParams& p, int width, int height) {
  if (p.sweeps == Sweeps::off) return without("sweeps: false");
  if (p.paths != 8) return without("they take 8 paths");
  if (height < 2) return without("one row");
  if (!deviceAttribute(cudaDevAttrCooperativeLaunch)) return without("the device has no cooperative launch");
  const int sms = plannedMultiprocessors();
  const size_t perSmBytes = plannedSharedMemoryPerMultiprocessor();
  const size_t perBlockBytes =
      std::min(static_cast<size_t>(deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin)), perSmBytes);
  const size_t reserved = deviceAttribute(cudaDevAttrReservedSharedMemoryPerBlock);
  constexpr int kAlign = Lanes<D>::kPerWarp;  // whole warps of band columns
  bool wideEnough = false;
  for (auto [perSmWanted, sweepsALaunch] : {std::pair{2, 2}, std::pair{2, 1}, std::pair{1, 1}}) {
    const int wanted = sms * perSmWanted / sweepsALaunch;  // bands a sweep
    SweepPlan s;
    s.sweepsALaunch = sweepsALaunch;
    s.bandWidth = (std::max(kGhost, (width + wanted - 1) / wanted) + kAlign - 1) / kAlign * kAlign;
    if (p.sweeps == Sweeps::automatic && s.bandWidth < kSweepsBandWidth) continue;
    wideEnough = true;
    s.bands = (width + s.bandWidth - 1) / s.bandWidth;
    s.slots = s.bandWidth + 2 * kGhost;
    if (windowCodes<D>(s.slots) > kCodesPerThread * kThreads) continue;
    for (bool ring : {false, true}) {
      s.ring = ring;
      s.sharedBytes = sharedBytesOf<D>(s.slots, ring);
      if (s.sharedBytes > perBlockBytes) continue;
      const auto kernel = ring ? sweep<D, true> : sweep<D, false>;
      allowSharedMemory(kernel, s.sharedBytes, "SGM sweeps (one band of columns)");
      int perSm = 0;
      PP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, s.sharedBytes));
      perSm = std::min(perSm, static_cast<int>(perSmBytes / (s.sharedBytes + reserved)));
      if (perSm * sms < sweepsALaunch * s.bands) continue;
      s.handoffBytes = static_cast<size_t>(2) * s.bands * 2 * 2 * kGhost * kEntryBytes<D>;
      s.flags = 2 * s.bands;
      return s;
    }
  }
  const std::string device = std::to_string(sms) + (sms == 1 ? " SM" : " SMs");
  return without(wideEnough ? "no plan of their bands fits the shared memory of " + device + " of " +
                                  std::to_string(perSmBytes / 1024) + " KiB"
                            : "auto: on " + device + " their bands would be narrower than " +
                                  std::to_string(kSweepsBandWidth) + " columns");
}

template <int D>
void launch(const SgmParams& p, const SgmBuffers& b, const SweepPlan& s, const SweepBuffers& w, cudaStream_t stream) {
  SgmParams params = p;
  SgmBuffers buffers = b;
  for (int firstSweep = 0; firstSweep < 2; firstSweep += s.sweepsALaunch) {
    SweepArgs a{s.bands, s.bandWidth, s.slots, firstSweep, w.handoff, w.flags, w.epoch};
    void* args[] = {&params, &buffers, &a};
    const auto kernel = s.ring ? sweep<D, true> : sweep<D, false>;
    PP_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(s.sweepsALaunch * s.bands),
                                              dim3(kThreads), args, s.sharedBytes, stream));
  }
}

}  // namespace

SweepPlan planSweeps(const SgmParams& p, int width, int height) {
  switch (p.disparities) {
    case 64: return plan<64>(p, width, height);
    case 128: return plan<128>(p, width, height);
    case 256: return plan<256>(p, width, height);
    default: return without("they take 64, 128 or 256 disparities");
  }
}

void launchSweeps(const SgmParams& p, const SgmBuffers& b, const SweepPlan& s, const SweepBuffers& w,
                  cudaStream_t stream) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, s, w, stream);
    case 128: return launch<128>(p, b, s, w, stream);
    case 256: return launch<256>(p, b, s, w, stream);
    default:
      throw std::invalid_argument("SGM sweeps: 64, 128 or 256 disparities, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
