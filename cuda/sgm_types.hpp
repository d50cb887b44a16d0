// Semi-global matching: the parameters and the fixed rules that the CPU reference
// (stages/stereo/sgm_cpu.cpp) and the CUDA kernels (cuda/sgm_*.cu) share, so both are the same
// integer pipeline and agree bit for bit.
//
//  1. Census: a 9x7 centre-symmetric census (31 pixel pairs mirrored about the centre, one bit
//     each: set when the first pixel of the pair is brighter), borders replicated.
//  2. Cost: Hamming distance (0..31) between left census at x and right census at x - d - min_d;
//     where that falls left of the image the cost is kOutsideCost.
//  3. Paths: L(p,d) = C(p,d) + min(L(p-r,d), L(p-r,d+-1) + P1, min L(p-r) + P2) - min L(p-r), in
//     8 bits (L <= 31 + P2 <= 255); 4 paths (left, right, up, down) or 8 (and the diagonals). The
//     sum over paths is one 16-bit volume. Adaptive P2: P2 / |I(p) - I(p-r)|, at least P1.
//  4. Winner takes all: the smallest sum, ties to the smaller d. Uniqueness (OpenCV's rule): invalid
//     when some d more than 1 away has sum * (100 - uniqueness) < best * 100. Sub-pixel: parabola
//     through the neighbours' sums, rounded to 1/16. The right image's disparity is the argmin
//     over d of the sum at (xr + d + min_d, d).
//  5. Left-right check: invalid unless |d - d_right(x - d - min_d)| <= lr_max_diff (integer d);
//     a match left of the right image cannot be checked and is invalid too.
//  6. Fill (optional): each pixel still invalid takes the smaller (background) of the nearest valid
//     disparities to its left and right in its row, as occluded pixels behind a foreground edge
//     should; its confidence stays 0, so a consumer can tell. A row without valid pixels stays
//     invalid.
//  7. 3x3 median of the valid disparities around each valid one (lower median; invalid stays).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace pp::stereo {

// Where the six directions from above and below of 8 paths go: in two sweeps of column bands
// (cuda/sgm_sweep.cu), a third of the volume traffic (at 256 disparities a third of the L2 bytes of
// the rows around), or to the walkers. `automatic` takes the sweeps where a band (an SM's share of
// the columns, see planSweeps) is at least kSweepsBandWidth columns wide: at 1224 columns and 128
// disparities the sweeps beat the walkers down to bands of 40 columns (AGX Orin's 16 SMs: 80) and
// lose at 32 (measured by SM count in stages/stereo/PERFORMANCE.md).
// With 4 paths, and with 8 at 256 disparities where `automatic` declined the sweeps or where the
// sweeps asked for do not fit, the same choice is whether the rows are walked around the walkers of
// the other directions (cuda/sgm_rows.cu: the volume stored by the walk from the left, read by the
// walk from the right as it takes the winner; no zeroing, no winner-takes-all pass) or with them:
// `automatic` walks them around where each SM of the planned device has at least
// rowsAroundPixelsPerSm pixels of the image (with 8 paths only at 256: below, where it declined the
// sweeps, the walkers were faster than the rows around them). The rows' two walks go one after the
// other, each a chain of a row's width in steps, which more SMs do not shorten; the other walkers'
// work an SM shrinks with them (measured by size and SM count in stages/stereo/PERFORMANCE.md: an
// Orin's 16 SMs take it from 612x512 up, all 132 of an H200's at 2448x2048 but not at 1224x1024 or
// Aloe's 1282x1110). With 4 paths at 256 disparities the walkers start with the walk from the left
// (leftWalkFirst in cuda/sgm.cuh) and beat the rows around on an H200 at 2448x2048 too (38k pixels an
// SM), while on 16 SMs at 1224x1024 (78k) the rows around are still faster and move a quarter fewer
// L2 bytes: the threshold there lies between the two.
enum class Sweeps : uint8_t { off, on, automatic };
constexpr int kSweepsBandWidth = 36;
constexpr long long rowsAroundPixelsPerSm(int paths, int disparities) {
  return paths == 8 ? 32768 : disparities == 256 ? 65536 : 16384;
}

struct SgmParams {
  int disparities = 128;  // 64, 128 or 256
  int minDisparity = 0;   // disparity of the first candidate (>= 0)
  int paths = 8;          // 4 or 8
  int p1 = 10;            // penalty of a one-step disparity change
  int p2 = 120;           // penalty of a larger change (p1..kMaxPenalty)
  bool p2Adaptive = false;
  int uniqueness = 5;  // percent; 0 turns the check off
  bool subpixel = true;
  int lrMaxDiff = 1;  // < 0 turns the left-right check off
  bool fill = true;   // invalid pixels take the background disparity (see 6.)
  bool median = true;
  Sweeps sweeps = Sweeps::automatic;  // where the device holds the bands; else a walker a line
};

// The path directions (dx, dy) in the order `paths` takes them: 4 paths are the first four.
constexpr int kPathDirections[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

constexpr uint16_t kInvalidDisparity = 0xFFFF;  // in the 16-bit output (disparity x 16 otherwise)
constexpr int kSubpixelBits = 4;
// min_disparity + disparities stay below this (disparity x 16 fits the 16-bit output below
// kInvalidDisparity): the one bound the YAML schema, the command line and checkParams all use.
constexpr int kDisparityLimit = (kInvalidDisparity >> kSubpixelBits) + 1;  // 4096
constexpr int kMaxMinDisparity = kDisparityLimit - 1 - 64;                 // with the fewest disparities, 64
constexpr int kOutsideCost = 31;
constexpr int kMaxPenalty = 224;  // P1, P2 at most this: path costs (<= 31 + P2) stay in 8 bits
constexpr int kCensusWidth = 9, kCensusHeight = 7;

// A disparity x 16 in pixels, 0 where invalid (consumers such as dof read 0 as "no depth").
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline float
    disparityPixels(uint16_t v) {
  return v == kInvalidDisparity ? 0.f : static_cast<float>(v) / (1 << kSubpixelBits);
}

// Fixed-point parabola offset in 1/16 pixel from the sums at d-1, d, d+1 (left, best, right).
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline int
    subpixelOffset(int left, int best, int right) {
  int num = (left - right) * (1 << kSubpixelBits), den = 2 * (left + right - 2 * best);
  if (den <= 0) return 0;
  int off = num >= 0 ? (2 * num + den) / (2 * den) : -((-2 * num + den) / (2 * den));
  return off < -8 ? -8 : off > 8 ? 8 : off;
}

// Depth Z = q23 / (q32 d + q33) from a disparity d in pixels: from a calibration's Q (q23 = Q[2][3],
// q32 = Q[3][2], q33 = Q[3][3]) or baseline x focal length (q32 = 1, q33 = 0).
struct DepthModel {
  float q23 = 1.f, q32 = 1.f, q33 = 0.f;
};

// The depth of a disparity x 16: +inf where it is invalid or the point is not in front. Rounded
// the same on both sides (one fused multiply-add, one correctly rounded division).
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline float
    depthOf(const DepthModel& m, uint16_t d) {
#if defined(__CUDA_ARCH__)
  float w = __fmaf_rn(m.q32, static_cast<float>(d) / (1 << kSubpixelBits), m.q33);
  return d != kInvalidDisparity && w > 0.f ? __fdiv_rn(m.q23, w) : __int_as_float(0x7f800000);
#else
  float w = std::fma(m.q32, static_cast<float>(d) / (1 << kSubpixelBits), m.q33);
  return d != kInvalidDisparity && w > 0.f ? m.q23 / w : std::numeric_limits<float>::infinity();
#endif
}

// Adaptive P2 for an intensity step.
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline int
    adaptiveP2(const SgmParams& p, int step) {
  if (!p.p2Adaptive || step <= 1) return p.p2;
  int v = p.p2 / step;
  return v < p.p1 ? p.p1 : v;
}

}  // namespace pp::stereo
