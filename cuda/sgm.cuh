// Semi-global matching kernels, one file per step (census, path aggregation, winner takes all with
// the left-right check, median) behind these thin launchers. The rules are in cuda/sgm_types.hpp.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/image_view.hpp"
#include "cuda/sgm_types.hpp"

namespace pp::stereo {

// What the aggregation and WTA kernels read: both images' census codes (width x height, packed
// rows), the left image (adaptive P2) and the volume [y][x][d] of 16-bit words, each a matching
// cost and a sum of path costs (see cuda/sgm_path.cuh).
struct SgmBuffers {
  int width = 0, height = 0;
  const uint32_t* censusLeft = nullptr;
  const uint32_t* censusRight = nullptr;
  ImageView<const uint8_t> left;
  uint16_t* volume = nullptr;
};

// 9x7 centre-symmetric census of both u8 images of a pair (one size) into width x height codes
// each. It is the first kernel of a frame, launched in the ordinary way; each kernel after it is
// launched as the one before it finishes (cuda/dependent_launch.cuh).
void launchCensus(ImageView<const uint8_t> left, ImageView<const uint8_t> right, uint32_t* leftCodes,
                  uint32_t* rightCodes, cudaStream_t stream);

// Whether each frame's matching costs are written into the volume words' top bits (layout in
// cuda/sgm_path.cuh), to be read by every path direction, rather than computed by each from the
// census codes. It takes a step's 17 code loads and 16 Hamming distances a lane down to 4 loads and
// bit shifts (a fifth fewer instructions), but each direction then reads the whole volume through
// the L2 as well as adding to it. That pays at 256 disparities, where the volume misses the L2
// anyway; below, where the fronts' additions merge in the L2, the extra reads cost more.
constexpr bool costsInVolume(int disparities) { return disparities == 256; }

// Where costsInVolume: every pixel's matching costs into the volume, its sums zero.
void launchMatchingCost(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream);

// Where the walkers take the directions from above and below (no sweeps, no rows around), whether
// the walk from the left goes first, storing each pixel's path costs as its sums (see
// launchRowsFromLeft), and the walkers take the other directions: at 256 disparities in place of
// launchMatchingCost (the walk stores the matching costs above its path costs), below 256 in place
// of the zeros the winner-takes-all leaves. The walk is a chain of a row's width in steps, on a big
// GPU longer than the pass it replaces; what it takes from the walkers paid on an H200 with 4
// paths at 256 disparities (a quarter of their directions, half their rows: 11-19% faster) and
// with 8 below 256 (1.5%), not with 8 at 256 (Aloe 0.7% slower) or 4 below (1.2% slower; see
// stages/stereo/PERFORMANCE.md).
constexpr bool leftWalkFirst(const SgmParams& p) { return p.paths == (costsInVolume(p.disparities) ? 4 : 8); }

// Every path direction (4 or 8) over every line of the image, added into the volume's sums, which
// must be zero; with Lines::columns only the directions from above and below, with
// Lines::allButFromLeft every direction but the walk from the left, added to what that walk stored
// (see launchRowsFromLeft).
enum class Lines : uint8_t { all, columns, allButFromLeft };
void launchPathAggregation(const SgmParams& p, const SgmBuffers& b, Lines lines, cudaStream_t stream);

// The six directions from above and below of 8 paths in two sweeps of column bands (see
// cuda/sgm_sweep.cu), where the device holds every band of a sweep at once: how many bands a sweep,
// whether both sweeps go in one launch, and what they need beside SgmBuffers. bands == 0 where the
// sweeps do not apply (SgmParams::sweeps off, 4 paths, one row, a device without cooperative launch
// or too small to hold a sweep's bands at once), or, with Sweeps::automatic, where the bands would be
// narrower than kSweepsBandWidth columns.
struct SweepPlan {
  int bands = 0, bandWidth = 0, slots = 0;
  int sweepsALaunch = 0;  // 2: both sweeps in one launch; 1: one after the other
  bool ring = false;      // a block's costs in a ring a direction, not two buffers (see cuda/sgm_sweep.cu)
  size_t sharedBytes = 0, handoffBytes = 0;
  int flags = 0;        // unsigned words
  std::string without;  // where there are no bands: why not
};
SweepPlan planSweeps(const SgmParams& p, int width, int height);
struct SweepBuffers {
  uint8_t* handoff = nullptr;  // handoffBytes
  unsigned* flags = nullptr;   // `flags` words, zero before the first frame
  unsigned epoch = 1;          // 1..65535, a new one each frame
};
// Adds the six directions to the volume's sums.
void launchSweeps(const SgmParams& p, const SgmBuffers& b, const SweepPlan& s, const SweepBuffers& w,
                  cudaStream_t stream);

// Where the sweeps take six directions (or where rowsAroundColumns), the two along the
// rows (see cuda/sgm_rows.cu): first the walk from the left, which stores each pixel's path costs
// as its sums (the volume need not be zero; it also goes first where leftWalkFirst, before the
// walkers of every other direction); after the other directions, the walk from the right,
// which adds its own to the sums as it reads them and takes the winner as launchWinnerTakesAll
// does (the volume is left as it was). `records` and `rightBest`: width x height each, its scratch.
void launchRowsFromLeft(const SgmParams& p, const SgmBuffers& b, cudaStream_t stream);
void launchRowsFromRight(const SgmParams& p, const SgmBuffers& b, uint2* records, uint8_t* rightBest,
                         ImageView<uint16_t> disparity, ImageView<uint8_t> confidence, cudaStream_t stream);

// Where the sweeps do not take the directions from above and below (4 paths; no plan, at 256
// disparities also `auto`'s narrow bands): whether the rows are walked around their walkers (the
// walk from the left, the columns' and diagonals' walkers adding to its sums, the walk from the
// right taking the winner) rather than every direction adding to zeros and a winner-takes-all pass
// (SgmParams::sweeps, by the image's pixels an SM of the planned device: see
// rowsAroundPixelsPerSm).
bool rowsAroundColumns(const SgmParams& p, int width, int height);
// Where `auto` makes that choice by the pixels an SM: 4 paths, and 8 at 256 disparities. With 8
// below 256 it declined the sweeps only for bands too narrow, where the walkers are also faster than
// the rows around them (measured at half size).
constexpr bool rowsAroundByPixels(const SgmParams& p) { return p.paths == 4 || costsInVolume(p.disparities); }

// Winner takes all over the sums, sub-pixel, uniqueness, the right image's disparities, the
// left-right check and the fill: writes disparity x 16 (or kInvalidDisparity) and, when
// `confidence` has data, the confidence (0..255). With `clear` (unless costsInVolume), leaves
// the sums zero for the next frame's additions.
void launchWinnerTakesAll(const SgmParams& p, const SgmBuffers& b, ImageView<uint16_t> disparity,
                          ImageView<uint8_t> confidence, cudaStream_t stream, bool clear = true);

// 3x3 median of the valid disparities around each valid one.
void launchDisparityMedian(ImageView<const uint16_t> in, ImageView<uint16_t> out, cudaStream_t stream);

// Depth from disparity x 16 (depthOf).
void launchDisparityToDepth(ImageView<const uint16_t> disparity, ImageView<float> depth, DepthModel m,
                            cudaStream_t stream);

}  // namespace pp::stereo
