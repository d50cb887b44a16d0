// What the two kernels that take the winner share (cuda/sgm_winner_takes_all.cu over the volume,
// cuda/sgm_rows.cu as the last walk along the rows goes): a pixel's result from its sums (rule 4 of
// cuda/sgm_types.hpp) and the fill of a row (rule 6).
#pragma once
#include "cuda/sgm_path.cuh"  // kFullWarp

namespace pp::stereo {

// A match as both take it, (sum << 8 | d), so that the smaller key is the smaller sum, ties to the
// smaller d; kNoMatch is above every key (a right-image column's best before any candidate).
constexpr uint32_t kNoMatch = 0xFFFFFFFFu;

// A pixel's disparity x 16 (or kInvalidDisparity), its integer disparity less minDisparity (or
// kInvalidDisparity) for the left-right check, and its confidence (0..255), from its best sum and
// d, the lowest sum more than one disparity from d (`second`) and the sums at d - 1 and d + 1
// (`below`, `above`; read only where the sub-pixel offset is taken).
struct PixelWinner {
  uint16_t disparity, d;
  uint8_t confidence;
};
template <int D> __device__ __forceinline__ PixelWinner winnerOf(const SgmParams& p, int bestSum, int bestD, int second,
                                                                 int below, int above) {
  const bool unique = p.uniqueness <= 0 || second * (100 - p.uniqueness) >= bestSum * 100;
  if (!unique) return {kInvalidDisparity, kInvalidDisparity, 0};
  const int offset = p.subpixel && bestD > 0 && bestD < D - 1 ? subpixelOffset(below, bestSum, above) : 0;
  const uint8_t confidence = second == 0 ? 0 : static_cast<uint8_t>((255 * (second - bestSum) + second / 2) / second);
  return {static_cast<uint16_t>(((bestD + p.minDisparity) << kSubpixelBits) + offset), static_cast<uint16_t>(bestD),
          confidence};
}

// Rule 6 for one row, by a warp in chunks of 32 columns: the nearest valid disparity at or left of
// each column (kept in `scratch`), then at or right of it, and the smaller for invalid columns.
__device__ inline void fillRow(uint16_t* row, uint16_t* scratch, int width, int lane) {
  unsigned carry = kInvalidDisparity;
  for (int base = 0; base < width; base += 32) {
    int x = base + lane;
    unsigned v = x < width ? row[x] : kInvalidDisparity;
    unsigned atOrBelow = __ballot_sync(kFullWarp, v != kInvalidDisparity) & (0xFFFFFFFFu >> (31 - lane));
    unsigned nearest = __shfl_sync(kFullWarp, v, atOrBelow ? 31 - __clz(atOrBelow) : 0);
    if (!atOrBelow) nearest = carry;
    if (x < width) scratch[x] = static_cast<uint16_t>(nearest);
    carry = __shfl_sync(kFullWarp, nearest, 31);
  }
  carry = kInvalidDisparity;
  for (int base = (width - 1) / 32 * 32; base >= 0; base -= 32) {
    int x = base + lane;
    unsigned v = x < width ? row[x] : kInvalidDisparity;
    unsigned atOrAbove = __ballot_sync(kFullWarp, v != kInvalidDisparity) & (0xFFFFFFFFu << lane);
    unsigned nearest = __shfl_sync(kFullWarp, v, atOrAbove ? __ffs(atOrAbove) - 1 : 0);
    if (!atOrAbove) nearest = carry;
    if (x < width && v == kInvalidDisparity)
      row[x] = static_cast<uint16_t>(min(nearest, static_cast<unsigned>(scratch[x])));
    carry = __shfl_sync(kFullWarp, nearest, 0);
  }
}

}  // namespace pp::stereo
