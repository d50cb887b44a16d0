// The two directions along the rows, around those from above and below (the sweeps of
// cuda/sgm_sweep.cu, or the walkers of cuda/sgm_path_aggregation.cu where the sweeps do not run: 4
// paths, or 8 at 256 disparities on a big GPU), and the winner: a walker a row, of 16 disparities a
// lane as the aggregation's, or of 4 (8 at 256 disparities) where the GPU has more SMs than such
// walkers keep busy (withRowRuns). The walk from the left goes first and stores each pixel's path
// costs as its sums, so the volume need not be zero; the other directions add theirs; the walk from
// the right then reads the sums a step ahead, adds its own path costs in registers and takes each
// pixel's winner there. So the volume is stored once, added to by the other directions, and read
// once, with no winner-takes-all pass. (The walk from the left also goes first where the walkers
// take every other direction: see leftWalkFirst.)
//
// The winner as the walk from the right goes (the rules of cuda/sgm_types.hpp, as
// cuda/sgm_winner_takes_all.cu takes them): each match's (sum << 8 | d) by one permute; the pixel's
// best, the lowest sum outside the best's window and the sums beside the best by reductions over
// the walker's lanes, left in a record a pixel; the right image's best per column as a running
// minimum in registers, each disparity's slot moving a disparity a step (a column's last candidate,
// at d = 0, is the step's column), written out as the column completes. When a block's walks are
// done its warps finish its rows from the records: the pixel's disparity, the left-right check and
// the fill.
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/dependent_launch.cuh"
#include "cuda/device.hpp"
#include "cuda/sgm.cuh"
#include "cuda/sgm_path.cuh"
#include "cuda/sgm_winner.cuh"
#include "cuda/shared_memory.cuh"

namespace pp::stereo {

namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kRun = 4;  // a lane's disparities: kRuns runs of four

// A row's walker: kRuns runs of four disparities a lane (four: the fewest instructions a step; one,
// or two at 256 disparities: more warps, each step's chain shorter, for GPUs with more SMs than the
// rows' narrow walkers keep busy; see withRowRuns).
template <int D, int kRuns> struct RowWalkers {
  static constexpr int kLanes = D / (kRun * kRuns);  // a walker's
  static constexpr int kPerWarp = 32 / kLanes;
  static constexpr int kRowsPerBlock = kWarpsPerBlock * kPerWarp;
  static constexpr int kRunStride = D / kRuns;
};

// Where a pixel's match is left of the right image, so that there is no right-image best to check
// it against: above every d a byte holds (256 disparities take them all).
constexpr int kNoRightMatch = 256;

// What the walk from the right leaves a pixel: (sum << 8 | d) of its best in x's bits 0-18 and the
// lowest sum more than one disparity from it in bits 19-29; the sums at d - 1 and d + 1 in y's halves.
struct Record {
  int bestSum, bestD, second, below, above;
  __device__ explicit Record(uint2 r)
      : bestSum(r.x >> 8 & 0x7FF), bestD(r.x & 0xFF), second(r.x >> 19), below(r.y & 0xFFFF), above(r.y >> 16) {}
};

// prmt with its sign-replicating selectors, which __byte_perm leaves out.
__device__ __forceinline__ uint32_t permute(uint32_t a, uint32_t b, uint32_t selector) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(selector));
  return r;
}

// Run q of a lane's runs, by selects (no indexing into registers).
__device__ __forceinline__ uint32_t pickRun(const uint32_t (&runs)[4], int q) {
  return q & 2 ? (q & 1 ? runs[3] : runs[2]) : (q & 1 ? runs[1] : runs[0]);
}
__device__ __forceinline__ uint32_t pickRun(const uint32_t (&runs)[2], int q) { return q & 1 ? runs[1] : runs[0]; }
__device__ __forceinline__ uint32_t pickRun(const uint32_t (&runs)[1], int) { return runs[0]; }

// One pixel's winner from its sums `total` (lane part's run q: disparities d and d + 1 of
// q * kRunStride + part * kRun + 2j, less minDisparity, in total[q][j]'s halves): its record, the
// walker's lanes alike. Each match's key goes into `right`, the running minimum of the right-image
// column it matches (see the file's comment).
template <int D, int kRuns, int kPhase>
__device__ __forceinline__ uint2 takeWinner(const uint32_t (&total)[kRuns][2],
                                            const WalkerLane<RowWalkers<D, kRuns>::kLanes>& place,
                                            uint32_t (&right)[kRuns * kRun]) {
  using W = RowWalkers<D, kRuns>;
  constexpr int kStride = W::kRunStride;
  const int firstD = place.part * kRun;
  // Each match's (sum << 8 | d): d from a word of the run's four d, the sum's two bytes, and a zero
  // byte as the sign of the sum's high one (a sum is below 2^11).
  const uint32_t runD = firstD * 0x01010101u + 0x03020100u;
  uint32_t key[kRuns][kRun];
#pragma unroll
  for (int q = 0; q < kRuns; ++q)
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      constexpr int kByte[2] = {0, 2};
      const int low = kByte[k % 2];
      key[q][k] = permute(total[q][k / 2], runD + q * kStride * 0x01010101u,
                          (4 + k) | low << 4 | (low + 1) << 8 | (8 + low + 1) << 12);
      uint32_t& column = right[q * kRun + rowSlot<kRun, kPhase>(k, false)];
      column = min(column, key[q][k]);
    }
  uint32_t least = key[0][0];
#pragma unroll
  for (int q = 0; q < kRuns; ++q)
#pragma unroll
    for (int k = 0; k < kRun; ++k) least = min(least, key[q][k]);
  const uint32_t best = walkerMin<W::kLanes, false>(static_cast<int>(least));
  const int bestD = static_cast<int>(best & 0xFF);
  // The lowest sum outside bestD - 1 .. bestD + 1: in this lane's offsets from firstD, r .. r + 2.
  const int r = bestD - 1 - firstD;
  uint32_t outside = 0xFFFFFFFFu;
#pragma unroll
  for (int q = 0; q < kRuns; ++q)
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      const int offset = q * kStride + k;
      outside = offset - 2 <= r && r <= offset ? outside : min(outside, key[q][k]);
    }
  const uint32_t second = static_cast<uint32_t>(walkerMin<W::kLanes, false>(static_cast<int>(outside))) >> 8;
  // The sum at disparity d, from the lane that holds it: its word picked by selects (no indexing
  // into registers), then its half.
  auto sumAt = [&](int d) {
    const int q = d / kStride, k = d % kRun;
    uint32_t ofHalf[kRuns];
#pragma unroll
    for (int run = 0; run < kRuns; ++run) ofHalf[run] = k & 2 ? total[run][1] : total[run][0];
    const uint32_t word = pickRun(ofHalf, q);
    const uint32_t mine = (k & 1 ? word >> 16 : word) & 0xFFFFu;
    return static_cast<uint32_t>(__shfl_sync(kFullWarp, mine, d % kStride / kRun, W::kLanes));
  };
  const uint32_t below = sumAt(max(bestD - 1, 0)), above = sumAt(min(bestD + 1, D - 1));
  return make_uint2(best | second << 19, below | above << 16);
}

// Where the walk from the right leaves its results: a record a pixel and the right image's best d
// a column, width x height each.
struct RowWinnerBuffers {
  uint2* records;
  uint8_t* rightBest;
};

// A walker of row y in direction kDx. Walking right it stores its path costs as the pixels' sums;
// walking left it adds them to the sums read a step ahead and takes the winner. A spare
// walker (`spare`, past the last row) walks the last row again and writes nothing. Its steps go in
// two phases (some of a column's matches left of the right image or none), each a loop of one step
// with no branch, so that the scheduler can overlap a step's independent work. A step's right codes
// are those of the step before shifted a disparity, one entering (see moveRowCodes), loaded a step
// ahead with its left code and P2 (kAdaptive: SgmParams::p2Adaptive).
template <int D, int kRuns, int kDx, bool kAdaptive>
__device__ __forceinline__ void walkRow(const SgmParams& p, const SgmBuffers& b, int y, bool spare,
                                        const RowWinnerBuffers& w) {
  using W = RowWalkers<D, kRuns>;
  constexpr int kRunStride = W::kRunStride;
  constexpr bool kPairs = kPairedCosts;
  constexpr int kWords = kPairs ? 2 : kRun;  // a run's path costs: pairs, or one a register
  const WalkerLane<W::kLanes> place(threadIdx.x % 32);
  const int part = place.part, firstD = part * kRun + p.minDisparity, width = b.width;
  const uint32_t* leftCodes = b.censusLeft + static_cast<size_t>(y) * width;
  const uint32_t* rightCodes = b.censusRight + static_cast<size_t>(y) * width;
  const uint8_t* intensity = b.left.row(y);
  uint16_t* sums = b.volume + static_cast<size_t>(y) * width * D + part * kRun;
  auto xOf = [&](int s) { return kDx > 0 ? s : width - 1 - s; };

  // The right codes of this lane's disparities at the step's column: run q's i-th in right[q * kRun + i].
  uint32_t right[kRuns * kRun];
  {
    const int room = xOf(0) - firstD;
#pragma unroll
    for (int q = 0; q < kRuns; ++q)
#pragma unroll
      for (int i = 0; i < kRun; ++i) right[q * kRun + i] = __ldg(rightCodes + max(room - (q * kRunStride + i), 0));
  }
  // What step s loads: its left code, the right code entering its disparities (the lowest one's walking
  // right, the highest one's walking left; below column 0 a match outside, which the step ignores), its
  // P2 (0 where the line starts) and, taking the winner, the sums. Steps past the line load its last column's.
  struct Ahead {
    uint32_t centre, enters;
    int p2;
    uint2 sums[kRuns];
  };
  auto load = [&](int s) {
    const int x = xOf(min(s, width - 1));
    Ahead a;
    a.centre = __ldg(leftCodes + x);
    a.enters = __ldg(rightCodes + max(x - p.minDisparity - (kDx > 0 ? 0 : D - 1), 0));
    a.p2 = s == 0      ? 0
           : kAdaptive ? adaptiveP2(p, abs(static_cast<int>(intensity[x]) - static_cast<int>(intensity[x - kDx])))
                       : p.p2;
    if (kDx < 0) {
#pragma unroll
      for (int q = 0; q < kRuns; ++q) a.sums[q] = __ldcs(reinterpret_cast<const uint2*>(sums + x * D + q * kRunStride));
    }
    return a;
  };
  Ahead now = load(0);
  uint32_t prev[kRuns][kWords] = {};
  int minPrev = 0;  // with the first step's P2 of 0: the path cost is the matching cost
  // Walking left: the running minimum of the right-image column each of the lane's disparities
  // matches (run q's i-th at q * kRun + i), and the sums of the step before (`pending`, whose winner
  // each step takes beside its own recursion, so that the two overlap; before the first step, sums
  // above any real one). (Walking right, these and the sums loaded ahead are never read, and the
  // compiler drops them with the winner's code: plain ifs on kDx, as CUDA 11 compiles both branches
  // of an if constexpr in a lambda, and CUDA 11.2 takes no #pragma unroll in the one it discards.)
  uint32_t rightBest[kRuns * kRun], pending[kRuns][2];
#pragma unroll
  for (uint32_t& v : rightBest) v = kNoMatch;
#pragma unroll
  for (auto& run : pending) run[0] = run[1] = 0xFFFFFFFFu;
  uint2* records = w.records + static_cast<size_t>(y) * width;
  uint8_t* rightRow = w.rightBest + static_cast<size_t>(y) * width;

  // A step; four in a row with the right codes (and, taking the winner, the right image's bests)
  // rotated (kPhase 0..3, see rowSlot), so that no step moves them; for the steps left over, and
  // walking left at 256 disparities or without paired path costs, kPhase -1: moved in place. (There
  // the rotated winner takes more registers: at 256 it was slower, before sm_80 it spills;
  // stages/stereo/PERFORMANCE.md.)
  constexpr bool kRotates = kDx > 0 || (D < 256 && kPairs);
  auto step = [&](int s, auto testsConstant, auto phaseConstant) {
    constexpr bool kTests = decltype(testsConstant)::value;
    constexpr int kPhase = decltype(phaseConstant)::value;
    const Ahead ahead = load(s + 1);
    const int x = xOf(s);
    [[maybe_unused]] const int room = x - firstD;  // (CUDA 11.2 warns where kTests is false)
    uint32_t cost[kRuns][kWords];
#pragma unroll
    for (int q = 0; q < kRuns; ++q) {
      uint32_t each[kRun];
#pragma unroll
      for (int i = 0; i < kRun; ++i) {
        each[i] = __popc(now.centre ^ right[q * kRun + rowSlot<kRun, kPhase>(i, kDx > 0)]);
        if constexpr (kTests) each[i] = room >= q * kRunStride + i ? each[i] : kOutsideCost;
      }
#pragma unroll
      for (int j = 0; j < kWords; ++j)
        cost[q][j] = kPairs ? __byte_perm(each[2 * j], each[2 * j + 1], 0x5410) : each[j];
    }
    uint32_t next[kRuns][kWords];
    minPrev = pathStep<kPairs, W::kLanes, kRuns>(prev, cost, place, p.p1, minPrev, now.p2, next);
    // The run's path costs as the volume's pair words (below 2^16 each); walking right where
    // costsInVolume, with the matching costs above them for the other directions' walkers.
    uint32_t words[kRuns][2];
#pragma unroll
    for (int q = 0; q < kRuns; ++q) {
      words[q][0] = kPairs ? next[q][0] : __byte_perm(next[q][0], next[q][1], 0x5410);
      words[q][1] = kPairs ? next[q][1] : __byte_perm(next[q][2], next[q][3], 0x5410);
      if (costsInVolume(D) && kDx > 0) {
        words[q][0] += (kPairs ? cost[q][0] : __byte_perm(cost[q][0], cost[q][1], 0x5410)) << kSumBits;
        words[q][1] += (kPairs ? cost[q][1] : __byte_perm(cost[q][2], cost[q][3], 0x5410)) << kSumBits;
      }
#pragma unroll
      for (int j = 0; j < kWords; ++j) prev[q][j] = next[q][j];
    }
    if (kDx < 0) {
      // Column x + 1's winner, and column x + 1 - minDisparity has had its last candidate (d = 0, the
      // first lane's first): out, and each slot on to the column a disparity lower.
      // (The first step's, of no column, goes to the last column's record and right-image best,
      // which the next step overwrites.) The walker's lanes store the record alike.
      const uint2 record = takeWinner<D, kRuns, kPhase>(pending, place, rightBest);
      const int column = min(x + 1, width - 1) - p.minDisparity;
      if (!spare) records[min(x + 1, width - 1)] = record;
      if (!spare && part == 0 && column >= 0)
        rightRow[column] = static_cast<uint8_t>(rightBest[rowSlot<kRun, kPhase>(0, false)]);
      moveRowCodes<kRuns, kRun, W::kLanes, kPhase>(rightBest, false, place, kNoMatch);
      constexpr uint32_t kSums = (costsInVolume(D) ? kSumMask : 0xFFFFu) * 0x10001u;  // the costs above them out
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
        pending[q][0] = (now.sums[q].x + words[q][0]) & kSums, pending[q][1] = (now.sums[q].y + words[q][1]) & kSums;
    } else if (!spare) {
#pragma unroll
      for (int q = 0; q < kRuns; ++q)
        __stcg(reinterpret_cast<uint2*>(sums + x * D + q * kRunStride), make_uint2(words[q][0], words[q][1]));
    }
    moveRowCodes<kRuns, kRun, W::kLanes, kPhase>(right, kDx > 0, place, ahead.enters);
    now = ahead;
  };
  auto walk = [&](int from, int to, auto testsConstant) {
    int s = from;
    for (; kRotates && s + kRun <= to; s += kRun) {
      step(s, testsConstant, std::integral_constant<int, 0>{});
      step(s + 1, testsConstant, std::integral_constant<int, 1>{});
      step(s + 2, testsConstant, std::integral_constant<int, 2>{});
      step(s + 3, testsConstant, std::integral_constant<int, 3>{});
    }
    for (; s < to; ++s) step(s, testsConstant, std::integral_constant<int, -1>{});
  };
  // The steps whose column has a match left of the right image (x < minDisparity + D - 1) apart.
  const int edge = min(p.minDisparity + D - 1, width);
  if constexpr (kDx > 0) {
    walk(0, edge, std::true_type{});
    walk(edge, width, std::false_type{});
  } else {  // a step past the line's end for the last column's winner
    walk(0, width - edge, std::false_type{});
    walk(width - edge, width + 1, std::true_type{});
  }
}

// The walk from the left along every row: each pixel's path costs stored as its sums.
template <int D, int kRuns, bool kAdaptive> __global__ void __launch_bounds__(kWarpsPerBlock * 32)
    rowsFromLeft(SgmParams p, SgmBuffers b) {
  using W = RowWalkers<D, kRuns>;
  waitForPreviousKernel();
  const int row = blockIdx.x * W::kRowsPerBlock + threadIdx.x / W::kLanes;
  walkRow<D, kRuns, 1, kAdaptive>(p, b, min(row, b.height - 1), row >= b.height, RowWinnerBuffers{});
}

// The walk from the right along every row with the winner, then the block's rows finished: a warp
// a row at a time, each pixel from its record, the left-right check against the right image's best
// and the fill (rules 4 to 6), the left image's integer disparities in shared memory.
template <int D, int kRuns, bool kAdaptive> __global__ void __launch_bounds__(kWarpsPerBlock * 32)
    rowsFromRight(SgmParams p, SgmBuffers b, RowWinnerBuffers w, ImageView<uint16_t> disparity,
                  ImageView<uint8_t> confidence) {
  using W = RowWalkers<D, kRuns>;
  extern __shared__ uint16_t leftBest[];  // [warp][width]
  waitForPreviousKernel();
  const int firstRow = blockIdx.x * W::kRowsPerBlock, row = firstRow + threadIdx.x / W::kLanes;
  walkRow<D, kRuns, -1, kAdaptive>(p, b, min(row, b.height - 1), row >= b.height, w);
  __syncthreads();  // the block's records and right-image bests written

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, width = b.width;
  uint16_t* best = leftBest + warp * width;
  for (int y = firstRow + warp; y < min(firstRow + W::kRowsPerBlock, b.height); y += kWarpsPerBlock) {
    uint16_t* out = disparity.row(y);
    uint8_t* conf = confidence.data ? confidence.row(y) : nullptr;
    const uint2* records = w.records + static_cast<size_t>(y) * width;
    const uint8_t* rightRow = w.rightBest + static_cast<size_t>(y) * width;
    // kInFlight pixels a lane at once, each a chain of two loads (its record, then the right image's
    // best where its disparity points), every load before any store: the bests are bytes, which the
    // compiler must take the stores to change, so it would not move a load above them.
    constexpr int kInFlight = 4;
    for (int x0 = lane; x0 < width; x0 += 32 * kInFlight) {
      uint2 raw[kInFlight];
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) raw[k] = x0 + 32 * k < width ? __ldcg(records + x0 + 32 * k) : uint2{};
      PixelWinner px[kInFlight];
      bool checked[kInFlight];  // by the left-right check
      int match[kInFlight];
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) {
        const Record r(raw[k]);
        px[k] = winnerOf<D>(p, r.bestSum, r.bestD, r.second, r.below, r.above);
        const int xr = x0 + 32 * k - px[k].d - p.minDisparity;
        checked[k] = x0 + 32 * k < width && px[k].d != kInvalidDisparity && p.lrMaxDiff >= 0;
        match[k] = checked[k] && xr >= 0 ? rightRow[xr] : kNoRightMatch;
      }
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) {
        const int x = x0 + 32 * k;
        if (x >= width) break;
        if (checked[k] && (match[k] == kNoRightMatch || abs(match[k] - px[k].d) > p.lrMaxDiff))
          px[k].disparity = kInvalidDisparity, px[k].confidence = 0;
        out[x] = px[k].disparity;
        best[x] = px[k].d;
        if (conf) conf[x] = px[k].confidence;
      }
    }
    if (p.fill) {
      __syncwarp();
      fillRow(out, best, width, lane);
    }
  }
}

// f(std::integral_constant<int, D>). At 256 disparities (costsInVolume) the walk from the left also
// stores each pixel's matching costs above its sums, which the other directions' walkers read, and
// the walk from the right masks them off the sums it reads.
template <class F> void withDisparities(const SgmParams& p, F&& f) {
  switch (p.disparities) {
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    default:
      throw std::invalid_argument("SGM rows' walks: 64, 128 or 256 disparities, not " + std::to_string(p.disparities));
  }
}

template <int D, int kRuns> int blocksFor(const SgmBuffers& b) {
  return (b.height + RowWalkers<D, kRuns>::kRowsPerBlock - 1) / RowWalkers<D, kRuns>::kRowsPerBlock;
}

// f(std::integral_constant<int, kRuns>) for the rows' walkers: the narrow ones (four runs a lane)
// where they give every SM five warps at least, else the wide ones (one run a lane, two at 256
// disparities), whose more warps hide a step's latency where the narrow ones leave schedulers
// idle (the crossover measured by SM count is in stages/stereo/PERFORMANCE.md).
template <int D, class F> void withRowRuns(const SgmBuffers& b, F&& f) {
  constexpr int kNarrowWarpsPerSm = 5;
  const int narrowWarps = b.height * RowWalkers<D, 4>::kLanes / 32;
  if (narrowWarps >= kNarrowWarpsPerSm * plannedMultiprocessors()) return f(std::integral_constant<int, 4>{});
  constexpr int kWideRuns = D == 256 ? 2 : 1;  // 16 lanes a walker at 64, a warp at 128 and 256
  return f(std::integral_constant<int, kWideRuns>{});
}

}  // namespace

void launchRowsFromLeft(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream) {
  withDisparities(p, [&](auto disparities) {
    constexpr int D = decltype(disparities)::value;
    withRowRuns<D>(b, [&](auto runs) {
      constexpr int kRuns = decltype(runs)::value;
      launchDependent(p.p2Adaptive ? rowsFromLeft<D, kRuns, true> : rowsFromLeft<D, kRuns, false>,
                      blocksFor<D, kRuns>(b), kWarpsPerBlock * 32, 0, stream, p, b);
    });
  });
}

bool rowsAroundColumns(const SgmParams& p, int width, int height) {
  if (p.sweeps != Sweeps::automatic) return p.sweeps == Sweeps::on;
  if (!rowsAroundByPixels(p)) return false;
  const long long perSm = static_cast<long long>(width) * height / plannedMultiprocessors();
  return perSm >= rowsAroundPixelsPerSm(p.paths, p.disparities);
}

void launchRowsFromRight(const SgmParams& p, const SgmBuffers& b, uint2* records, uint8_t* rightBest,
                         ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, cudaStream_t stream) {
  withDisparities(p, [&](auto disparities) {
    constexpr int D = decltype(disparities)::value;
    withRowRuns<D>(b, [&](auto runs) {
      constexpr int kRuns = decltype(runs)::value;
      const size_t bytes = kWarpsPerBlock * b.width * sizeof(uint16_t);
      auto kernel = p.p2Adaptive ? rowsFromRight<D, kRuns, true> : rowsFromRight<D, kRuns, false>;
      allowSharedMemory(kernel, bytes, "SGM rows' winner (a row's disparities a warp)");
      launchDependent(kernel, blocksFor<D, kRuns>(b), kWarpsPerBlock * 32, bytes, stream, p, b,
                      RowWinnerBuffers{records, rightBest}, disparity, confidence);
    });
  });
}

}  // namespace pp::stereo
