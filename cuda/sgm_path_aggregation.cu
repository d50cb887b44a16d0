// Path aggregation: every line of every direction is walked by a group of lanes, each holding 16 (8
// with 4 paths) disparities of the path cost in registers (two to a register where kCostPairs), so
// that a step is that many independent recursions a lane and a warp walks several lines at once
// (libSGM's layout). A lane's disparities are runs of four spread over the range, so that each of
// its 64-bit reductions of the 16-bit sums lands next to those of the walker's other lanes (whole
// sectors). All walkers add their path costs to the volume's sums with reductions. Below 256
// disparities a step computes its matching costs from census codes, a block's column or diagonal
// walkers taking theirs from a window in shared memory that the block fills two steps ahead and a
// row's walkers shifting theirs along; at 256 it reads them from the volume words it then adds to
// (see costsInVolume). Where the sweeps (cuda/sgm_sweep.cu) take six directions, cuda/sgm_rows.cu
// walks the other two; where the sweeps do not run (4 paths; at 256 disparities on a big GPU) it
// may walk the rows around these walkers (Lines::columns: they add to the sums the walk from the
// left stored), or the walk from the left alone before them (Lines::allButFromLeft, see
// leftWalkFirst).
#include <type_traits>

#include "cuda/dependent_launch.cuh"
#include "cuda/occupancy.cuh"
#include "cuda/sgm_path.cuh"

namespace pp::stereo {

namespace {

constexpr int kWarpsPerBlock = 4;

// Steps in a walker's ring of loads (a step's loads are issued kStepsAhead - 1 steps before its
// recursion) and blocks an SM the registers must allow. A deeper ring hides more of the loads'
// latency but takes registers, so fewer walkers are resident: when a launch does not fit at once,
// its last walkers start only as the first ones finish, and it takes two lines' time. The bounds
// keep a half-size launch resident on sm_90 (stages/stereo/PERFORMANCE.md has the measurements);
// elsewhere the registers are not bounded.
template <int D, int kLaneDisparities> constexpr int kStepsAhead = kLaneDisparities >= 16 || D == 256 ? 2 : 4;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <int D, int kLaneDisparities> constexpr int kMinBlocksPerSm = D == 256 ? 1 : kLaneDisparities == 16 ? 6 : 5;
#else
template <int D, int kLaneDisparities> constexpr int kMinBlocksPerSm = 1;
#endif

// Whether a block's column and diagonal walkers take their census codes from a window in shared
// memory (see aggregate). With 8 disparities a lane it was slower.
template <int D, int kLaneDisparities> constexpr bool kSharesCodes = !costsInVolume(D) && kLaneDisparities == 16;

// Whether a row's walkers take their right codes from the step before, shifted a disparity (see
// enter in aggregate), rather than loading them: two loads a step instead of 17. The rows walk
// more steps than the columns and finish last; it pays with 16 disparities a lane, not with 8.
template <int D, int kLaneDisparities> constexpr bool kShiftsRowCodes = kSharesCodes<D, kLaneDisparities>;

// Whether a lane keeps its path costs two to a register (see step, and kPairedCosts): with 16 disparities a
// lane; with 8 a lane keeps one a register.
template <int D, int kLaneDisparities> constexpr bool kCostPairs = kPairedCosts &&
                                                                   (costsInVolume(D) || kLaneDisparities == 16);

// A walker: kLanes lanes (an aligned group), each holding kLaneDisparities of the D disparities.
template <int D, int kLaneDisparities> struct Walkers {
  static_assert(kLaneDisparities % 4 == 0 && D / kLaneDisparities <= 32,
                "runs of four disparities, at most a warp a walker");
  static constexpr int kLanes = D / kLaneDisparities;
  static constexpr int kPerWarp = 32 / kLanes;
};

// Walkers of a direction and where each enters the image. A row walker takes a row; a column or
// diagonal walker takes a column and walks every row, a diagonal one wrapping to the other side
// (where a new line starts), so that all walkers of the directions from the top (or bottom) are on
// the same row at the same step.
__host__ __device__ inline int lineCount(int dy, int width, int height) { return dy == 0 ? height : width; }
__device__ inline void lineStart(int line, int dx, int dy, int width, int height, int& x, int& y) {
  if (dy == 0)
    x = dx > 0 ? 0 : width - 1, y = line;
  else
    x = line, y = dy > 0 ? 0 : height - 1;
}

// The directions of one launch: the warps of direction i are those from firstWarp[i] on.
struct Directions {
  int count;
  int dx[8], dy[8], firstWarp[9];
};

// What a step loads before its recursion: the census codes of the left pixel and of the right
// pixels this lane's disparities match, or the volume words holding their costs, and the intensity
// step's P2 (0 where a line starts).
template <int kLaneDisparities, bool kCostWords> struct StepLoads {
  uint32_t centre, right[kLaneDisparities];
  int p2;
};
template <int kLaneDisparities> struct StepLoads<kLaneDisparities, true> {
  uint2 words[kLaneDisparities / 4];  // a run of four costs each
  int p2;
};

// Every direction at once: the walkers of all directions run concurrently (one direction alone has
// too few to fill the device), so each adds its path costs to the volume with reductions.
// Four 16-bit words share a 64-bit reduction and never carry into each other (see kSumBits).
// kWholeFront: built to hold a full-size front at once (see launch), by the walkers' minimum.
template <int D, int kLaneDisparities, bool kWholeFront>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, kMinBlocksPerSm<D, kLaneDisparities>)
    aggregate(SgmParams p, SgmBuffers b, Directions dirs) {
  using W = Walkers<D, kLaneDisparities>;
  constexpr int kAhead = kStepsAhead<D, kLaneDisparities>;
  constexpr int kRun = 4, kRuns = kLaneDisparities / kRun, kRunStride = D / kRuns;  // a run: one 64-bit reduction
  constexpr int kLastOffset = (kRuns - 1) * kRunStride + kRun - 1;  // of this lane's disparities from its first
  using Loads = StepLoads<kLaneDisparities, costsInVolume(D)>;
  constexpr bool kPairs = kCostPairs<D, kLaneDisparities>;
  constexpr int kBlockWalkers = kWarpsPerBlock * W::kPerWarp;
  constexpr int kWindowRight = D + kBlockWalkers - 1,
                kWindowCodes = kWindowRight + kBlockWalkers;  // right codes, then left
  __shared__ uint32_t window[2][kSharesCodes<D, kLaneDisparities> ? kWindowCodes : 1];
  waitForPreviousKernel();
  int warp = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  const int walker = threadIdx.x / 32 * W::kPerWarp + lane / W::kLanes;  // in the block
  if (warp >= dirs.firstWarp[dirs.count]) return;  // whole warps (whole blocks where they share a window)
  int which = 0;
  while (warp >= dirs.firstWarp[which + 1]) ++which;
  const int dx = dirs.dx[which], dy = dirs.dy[which], lines = lineCount(dy, b.width, b.height);
  int line = (warp - dirs.firstWarp[which]) * W::kPerWarp + lane / W::kLanes;
  const bool adds = line < lines;  // a direction's spare walkers walk its last line again, adding nothing
  line = min(line, lines - 1);
  // Run q of this lane: disparities q * kRunStride + part * kRun + i, i < kRun.
  const WalkerLane<W::kLanes> place(lane);
  const int part = place.part, firstD = part * kRun + p.minDisparity;
  int x, y;
  lineStart(line, dx, dy, b.width, b.height, x, y);
  const int steps = dy == 0 ? b.width : b.height;
  const bool wraps = dx != 0 && dy != 0;
  const int lineFirstX = dx > 0 ? 0 : b.width - 1;  // where a wrapped diagonal starts again
  auto next = [&](int at) {
    at += dx;
    return wraps && (at == b.width || at < 0) ? lineFirstX : at;
  };
  auto startsLine = [&](int s, int at) { return s == 0 || (wraps && at == lineFirstX); };
  // This lane's first word of pixel (at, row).
  auto words = [&](int at, int row) { return b.volume + (static_cast<size_t>(row) * b.width + at) * D + part * kRun; };
  int loadStep = 0, loadX = x;
  // A step's costs from the volume, or its codes from the block's window (see below), or else from
  // global memory.
  auto load = [&](Loads& in, const uint32_t* codes) {
    if (loadStep >= steps) return;
    const int row = y + loadStep * dy;
    if constexpr (costsInVolume(D)) {
      const uint16_t* at = words(loadX, row);
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
        in.words[q] = __ldcg(reinterpret_cast<const uint2*>(at + q * kRunStride));  // from the L2: others add to them
    } else if (codes) {  // the walker's pixel is the window's left code `walker`; its matches end at right code walker
                         // + D - 1
      const uint32_t* right = codes + walker + D - 1 - (firstD - p.minDisparity);
      in.centre = codes[kWindowRight + walker];
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
#pragma unroll
        for (int i = 0; i < kRun; ++i) in.right[q * kRun + i] = right[-(q * kRunStride + i)];
    } else {
      const int room = loadX - firstD;
      const uint32_t* rightRow = b.censusRight + static_cast<size_t>(row) * b.width;
      in.centre = __ldg(b.censusLeft + static_cast<size_t>(row) * b.width + loadX);
      if (kShiftsRowCodes<D, kLaneDisparities> && dy == 0 &&
          loadStep > 0) {  // a row's step takes one new code (see enter)
        in.right[0] = __ldg(rightRow + max(loadX - p.minDisparity - (dx > 0 ? 0 : D - 1), 0));
      } else if (room >= kLastOffset) {  // every match inside the right image
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int i = 0; i < kRun; ++i) in.right[q * kRun + i] = __ldg(rightRow + room - (q * kRunStride + i));
      } else {  // near its left edge: a match outside reads the row's first code, which step() ignores
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int i = 0; i < kRun; ++i) in.right[q * kRun + i] = __ldg(rightRow + max(room - (q * kRunStride + i), 0));
      }
    }
    bool head = startsLine(loadStep, loadX);
    in.p2 = head           ? 0
            : p.p2Adaptive ? adaptiveP2(p, abs(static_cast<int>(b.left.row(row)[loadX]) -
                                               static_cast<int>(b.left.row(row - dy)[loadX - dx])))
                           : p.p2;
    ++loadStep, loadX = next(loadX);
  };

  // The path costs of the last step: run q's disparity i in prev[q][i], or where kPairs its
  // pairs (0, 1) and (2, 3) in the low and high halves of prev[q][0] and prev[q][1].
  uint32_t prev[kRuns][kPairs ? 2 : kRun] = {};
  int minPrev = 0;
  // One step from the loads in `in`. Where a line starts its P2 is 0 and minPrev is taken as 0: the
  // path cost is then its matching cost, as every previous cost is >= 0 (a P2 of 0 set by the user
  // gives the same: the jump is then the cheapest way on, and the cost is the matching cost).
  auto step = [&](int s, const Loads& in) {
    // The matching costs, laid out as prev.
    const int room = x - firstD;
    uint32_t cost[kRuns][kPairs ? 2 : kRun];
    // In the lambdas' `if constexpr`, kCostPairs itself: CUDA 11.2 takes no constexpr local of the kernel there.
    if constexpr (kCostPairs<D, kLaneDisparities> && costsInVolume(D)) {
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
        cost[q][0] = in.words[q].x >> kSumBits & kCostMask * 0x10001u,
        cost[q][1] = in.words[q].y >> kSumBits & kCostMask * 0x10001u;
    } else if constexpr (costsInVolume(D)) {
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
#pragma unroll
        for (int i = 0; i < kRun; ++i)
          cost[q][i] = ((i < 2 ? in.words[q].x : in.words[q].y) >> (i % 2 * 16 + kSumBits)) & kCostMask;
    } else {
      uint32_t each[kRuns][kRun];
      if (room >= kLastOffset) {
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int i = 0; i < kRun; ++i) each[q][i] = __popc(in.centre ^ in.right[q * kRun + i]);
      } else {
#pragma unroll
        for (int q = 0; q < kRuns; ++q)
#pragma unroll
          for (int i = 0; i < kRun; ++i)
            each[q][i] = room >= q * kRunStride + i ? __popc(in.centre ^ in.right[q * kRun + i]) : kOutsideCost;
      }
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
#pragma unroll
        for (int i = 0; i < (kPairs ? 2 : kRun); ++i)
          cost[q][i] = kPairs ? __byte_perm(each[q][2 * i], each[q][2 * i + 1], 0x5410) : each[q][i];
    }
    if (in.p2 == 0) minPrev = 0;
    uint32_t now[kRuns][kPairs ? 2 : kRun];
    minPrev = pathStep<kCostPairs<D, kLaneDisparities>, W::kLanes, kRuns, kWholeFront>(prev, cost, place, p.p1, minPrev,
                                                                                       in.p2, now);
    uint32_t sums[kRuns][2];  // this step's path costs, pairs as above
#pragma unroll
    for (int q = 0; q < kRuns; ++q) {
#pragma unroll
      for (int j = 0; j < (kPairs ? 2 : kRun); ++j) prev[q][j] = now[q][j];
      sums[q][0] = kPairs ? now[q][0] : __byte_perm(now[q][0], now[q][1], 0x5410);  // below 2^16
      sums[q][1] = kPairs ? now[q][1] : __byte_perm(now[q][2], now[q][3], 0x5410);
    }
    if (adds && s < steps) {  // the window's rounds of two may take a step past the line
      uint16_t* at = words(x, y + s * dy);
#pragma unroll
      for (int q = 0; q < kRuns; ++q) addToVolume(at + q * kRunStride, sums[q][0], sums[q][1]);
    }
    x = next(x);
  };

  if (dy == 0 || !kSharesCodes<D, kLaneDisparities>) {
    // A row's walker moves a column a step: each disparity's right code is the one its neighbour
    // below (above, walking left) had the step before, one shuffle a run across lanes, and one code
    // enters, loaded into right[0] (see kShiftsRowCodes).
    uint32_t last[kLaneDisparities];
    auto enter = [&](Loads& in) {
      if constexpr (kShiftsRowCodes<D, kLaneDisparities>) {
        const uint32_t enters = in.right[0];
#pragma unroll
        for (int k = 0; k < kLaneDisparities; ++k) in.right[k] = last[k];
        moveRowCodes<kRuns, kRun>(in.right, dx > 0, place, enters);
      }
    };
    // Each walker its own codes (a row's walkers share none): a ring of kAhead steps' loads,
    // each step's issued kAhead - 1 steps before it.
    Loads ring[kAhead];
#pragma unroll
    for (int c = 0; c < kAhead - 1; ++c) load(ring[c], nullptr);
    for (int s0 = 0; s0 < steps; s0 += kAhead) {
#pragma unroll
      for (int c = 0; c < kAhead; ++c) {
        load(ring[(c + kAhead - 1) % kAhead], nullptr);
        if (s0 + c < steps) {
          if constexpr (kShiftsRowCodes<D, kLaneDisparities>) {
            if (dy == 0) {
              if (s0 + c > 0) enter(ring[c]);
#pragma unroll
              for (int k = 0; k < kLaneDisparities; ++k) last[k] = ring[c].right[k];
            }
          }
          step(s0 + c, ring[c]);
        }
      }
    }
    return;
  }
  // A block's column or diagonal walkers are on one row at each step, on consecutive columns: the
  // block loads the codes they need into a window in shared memory, each thread one or two codes
  // two steps ahead, instead of each lane its 17 (ncu, half size with 8 paths: the loads' stalls
  // 3.2 -> 1.3 cycles an instruction, for one barrier a step). Where a diagonal block straddles the
  // image's side, its walkers past it have wrapped to the other side, where their lines start: the
  // window's columns wrap with them, and every match such a walker takes from the window's
  // unwrapped part is left of its line's start, outside the image (step() takes kOutsideCost).
  constexpr int kThreads = kWarpsPerBlock * 32, kPerThread = (kWindowCodes + kThreads - 1) / kThreads;
  const int blockFirstLine = (warp - walker / W::kPerWarp - dirs.firstWarp[which]) * W::kPerWarp;
  // Whether thread slot k's window index i is below n (known at compile time where the whole slot is).
  auto below = [](int k, int i, int n) { return (k + 1) * kThreads <= n || i < n; };
  uint32_t staged[kPerThread];
  auto fetch = [&](int t, int column) {
    if (t >= steps) return;
    const size_t rowStart = static_cast<size_t>(y + t * dy) * b.width;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int i = threadIdx.x + k * kThreads;
      const bool right = below(k, i, kWindowRight);
      int at = column + (right ? i - p.minDisparity - (D - 1) : i - kWindowRight);
      at = at >= b.width ? min(at - b.width, b.width - 1) : max(at, 0);  // below 0: a match outside the image
      if (below(k, i, kWindowCodes)) staged[k] = __ldg((right ? b.censusRight : b.censusLeft) + rowStart + at);
    }
  };
  auto store = [&](int t, uint32_t* codes) {
    if (t >= steps) return;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int i = threadIdx.x + k * kThreads;
      if (below(k, i, kWindowCodes)) codes[i] = staged[k];
    }
  };
  int column[3] = {blockFirstLine, 0, 0};  // the block's first walker's at steps s, s + 1, s + 2 (it moves as a walker)
  column[1] = next(column[0]), column[2] = next(column[1]);
  fetch(0, column[0]);
  store(0, window[0]);
  fetch(1, column[1]);
  __syncthreads();
  Loads in;
  // Two steps a round, one window each; a line of odd length takes a step more, which adds nothing.
  // A step's codes are read first, so that the next window's store and fetch cover their latency.
  for (int s0 = 0; s0 < steps; s0 += 2) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      load(in, window[c]);
      store(s0 + c + 1, window[1 - c]);
      fetch(s0 + c + 2, column[2]);
      step(s0 + c, in);
      column[0] = column[1], column[1] = column[2], column[2] = next(column[2]);
      __syncthreads();
    }
  }
}

// How many warps of `kernel` the device holds at once.
template <class Kernel> int residentWarps(Kernel kernel) {
  return residentBlocks(kernel, kWarpsPerBlock * 32) * kWarpsPerBlock;
}

template <int D, int kLaneDisparities>
void launch(const SgmParams& p, const SgmBuffers& b, Lines lines, cudaStream_t stream) {
  using W = Walkers<D, kLaneDisparities>;
  constexpr int kWarps = kSharesCodes<D, kLaneDisparities> ? kWarpsPerBlock : 1;  // a block's walkers share a window
  auto directionWarps = [&](int dy) {
    return (lineCount(dy, b.width, b.height) + kWarps * W::kPerWarp - 1) / (kWarps * W::kPerWarp) * kWarps;
  };
  auto launchWith = [&](auto kernel, const Directions& dirs) {
    const int blocks = (dirs.firstWarp[dirs.count] + kWarpsPerBlock - 1) / kWarpsPerBlock;
    launchDependent(kernel, blocks, kWarpsPerBlock * 32, 0, stream, p, b, dirs);
  };
  int top = 0, bottom = 0, rows = 0;  // warps of the directions from the top, from the bottom, along the rows
  auto walked = [&](int i) {
    const int dx = kPathDirections[i][0], dy = kPathDirections[i][1];
    return lines == Lines::all || dy != 0 || (lines == Lines::allButFromLeft && dx < 0);
  };
  for (int i = 0; i < p.paths; ++i) {
    const int dy = kPathDirections[i][1];
    if (walked(i)) (dy > 0 ? top : dy < 0 ? bottom : rows) += directionWarps(dy);
  }

  // At 256 disparities with 8 paths the kernel leaves too few warps resident for a full-size front
  // (3 x 2448 walkers, two a warp); kWholeFront, with fewer registers, holds it, so that its walkers
  // run together. Where the front fits either way the usual kernel is faster.
  auto kernel = aggregate<D, kLaneDisparities, false>;
  int resident = residentWarps(kernel);
  if constexpr (costsInVolume(D) && W::kLanes == 16) {  // where kWholeFront changes the code
    if (top > resident) {
      const int whole = residentWarps(aggregate<D, kLaneDisparities, true>);
      if (top <= whole) kernel = aggregate<D, kLaneDisparities, true>, resident = whole;
    }
  }

  // The directions from the top first, then those from the bottom, then the rows: the blocks are
  // started in that order, so each front's walkers run together and add into rows the L2 holds.
  // Where the walkers read their costs from the volume and the launch does not fit the device at
  // once but the front from the top and the rows do, the rows go first, so that the front from the
  // bottom starts whole once they are done rather than part of it beside the front from the top.
  // Below 256 disparities the rows first were slower wherever that held (wide images on a big GPU).
  const bool rowsFirst = costsInVolume(D) && top + bottom + rows > resident && top + rows <= resident;
  Directions dirs{0, {}, {}, {0}};
  for (int dy : {rowsFirst ? 0 : 1, rowsFirst ? 1 : -1, rowsFirst ? -1 : 0})
    for (int i = 0; i < p.paths; ++i) {
      if (kPathDirections[i][1] != dy || !walked(i)) continue;
      int k = dirs.count++;
      dirs.dx[k] = kPathDirections[i][0], dirs.dy[k] = dy;
      dirs.firstWarp[k + 1] = dirs.firstWarp[k] + directionWarps(dy);
    }
  launchWith(kernel, dirs);
}

// Sixteen disparities a lane take the fewest instructions a disparity. With 4 paths there are too
// few walkers for that to keep the device busy; eight a lane do better there.
template <int D> void launch(const SgmParams& p, const SgmBuffers& b, Lines lines, cudaStream_t stream) {
  if (p.paths == 8)
    launch<D, 16>(p, b, lines, stream);
  else
    launch<D, 8>(p, b, lines, stream);
}

}  // namespace

void launchPathAggregation(const SgmParams& p, const SgmBuffers& b, Lines lines, cudaStream_t stream) {
  switch (p.disparities) {
    case 64: return launch<64>(p, b, lines, stream);
    case 128: return launch<128>(p, b, lines, stream);
    case 256: return launch<256>(p, b, lines, stream);
    default:
      throw std::invalid_argument("SGM: disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  }
}

}  // namespace pp::stereo
