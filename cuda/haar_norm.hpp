// A Haar window's variance normalisation exactly as OpenCV computes it in double, without double
// arithmetic: 1 / sqrt(n) rounded to float, n = area * (sum of squares) - sum^2, and OpenCV's test
// area * norm < 0.1. A Jetson's GPU runs FP64 at 2 operations a clock and SM (1/64 of FP32), where
// the double square root and division (about 23 FP64 operations a window) would take half as long
// again as the rest of the cascade's first stage; these take float and integer operations, and fall
// back to double only where the two roundings OpenCV makes could decide the result (about one
// window in 2^26).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuda/float_rn.hpp"
#include "cuda/image_view.hpp"

namespace pp::faces {

// The normalisation area (the window less a pixel all round) must be below this, so that n, an area
// times a 32-bit sum of squares, is below 2^46.
constexpr int kMaxNormArea = 1 << 14;

namespace norm_detail {

PP_HD float floatOfBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
PP_HD uint32_t bitsOfFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// The high 64 bits of a * b.
PP_HD uint64_t mulHigh(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// OpenCV's own arithmetic, for the rare windows the exact comparisons cannot settle.
PP_HD float inverseSqrtInDouble(uint64_t n) {
#ifdef __CUDA_ARCH__
  return static_cast<float>(__ddiv_rn(1., __dsqrt_rn(static_cast<double>(n))));
#else
  return static_cast<float>(1. / std::sqrt(static_cast<double>(n)));
#endif
}

// Where q = 1 / sqrt(n) lies against m, the midpoint between the positive normal float with `bits`
// and the next float up: 1 above m, -1 below, 0 within a relative 2^-50 of it. With the float
// A 2^e (A its 24-bit significand), m = (2A + 1) 2^(e - 1), also where the next float starts a
// binade; q < m exactly when n m^2 > 1, that is when P = n (2A + 1)^2 > 2^k with k = 2 - 2e, all
// integers (P < 2^96 for n < 2^46).
PP_HD int againstMidpoint(uint64_t n, uint32_t bits) {
  const uint64_t a = (bits & 0x7FFFFFu) | 0x800000u, odd = 2 * a + 1, oddSquared = odd * odd;  // < 2^50
  const int k = 2 - 2 * (static_cast<int>(bits >> 23) - 150);
  const uint64_t pLo = n * oddSquared, pHi = mulHigh(n, oddSquared);
  const uint64_t powerLo = k < 64 ? uint64_t{1} << k : 0, powerHi = k >= 64 ? uint64_t{1} << (k - 64) : 0;
  // D = P - 2^k in 128 bits, then |D|.
  uint64_t dLo = pLo - powerLo, dHi = pHi - powerHi - (pLo < powerLo ? 1 : 0);
  const bool negative = (dHi >> 63) != 0;
  if (negative) dLo = ~dLo + 1, dHi = ~dHi + (dLo == 0 ? 1 : 0);
  // Near: |D| < 2^(k - 49), so that n m^2 is within 2^-49 of 1 and q within about 2^-50 of m.
  const int s = k - 49;
  const bool near = s <= 0 ? dHi == 0 && dLo == 0 : s >= 64 ? (dHi >> (s - 64)) == 0 : dHi == 0 && (dLo >> s) == 0;
  return near ? 0 : negative ? 1 : -1;
}

// The exact path: inverseSqrt from the float with `bits`, which must be within 8 floats of the
// result.
PP_HD float inverseSqrtFrom(uint64_t n, uint32_t bits) {
  for (int i = 0; i < 8; ++i) {
    const int above = againstMidpoint(n, bits);
    if (above == 0) break;
    if (above > 0) {
      ++bits;
      continue;
    }
    const int below = againstMidpoint(n, bits - 1);
    if (below == 0) break;
    if (below < 0) {
      --bits;
      continue;
    }
    return floatOfBits(bits);  // q between the midpoints either side: the float nearest q
  }
  return inverseSqrtInDouble(n);
}

}  // namespace norm_detail

// static_cast<float>(1. / std::sqrt(static_cast<double>(n))), bit for bit, for 0 < n < 2^46 (an
// area below kMaxNormArea times a 32-bit sum of squares). OpenCV's double r = 1 / sqrt(n), rounded
// twice, is within a relative 2^-52 of q = 1 / sqrt(n), so where no float midpoint is near q, r and q
// round to the same float. q is found to about 2^-43 in float arithmetic: from an estimate y,
// q = y (1 - e)^(-1/2) with e = 1 - n y^2 (below 2^-18) computed from exact products (n and y^2 as
// sums of two floats), so q ~ y + y (e/2 + 3e^2/8); that sum rounded is the result unless it lies
// within 2^-36 of a midpoint (about one window in 2^12), where the exact comparisons decide.
PP_HD float inverseSqrt(uint64_t n) {
  using namespace norm_detail;
  // n = x + xl exactly: the float nearest n and the rest (Fast2Sum of n's two 23-bit halves).
  const float high = mulRn(static_cast<float>(static_cast<uint32_t>(n >> 23)), 0x1p23f),
              low = static_cast<float>(static_cast<uint32_t>(n & 0x7FFFFFu));
  const float x = addRn(high, low), xl = addRn(low, -addRn(x, -high));
#ifdef __CUDA_ARCH__
  const float y = rsqrtf(x);
#else
  const float y = 1.f / std::sqrt(x);
#endif
  // e = 1 - n y^2 from y^2 = y2 + y2l and x y2 = p + pl, all exact; the term xl y2l (below 2^-48)
  // left out.
  const float y2 = mulRn(y, y), y2l = fmaRn(y, y, -y2), p = mulRn(x, y2), pl = fmaRn(x, y2, -p);
  float e = addRn(1.f, -p);  // exact: p is near 1
  e = addRn(e, -pl);
  e = fmaRn(-x, y2l, e);
  e = fmaRn(-xl, y2, e);
  const uint32_t yBits = bitsOfFloat(y);
  if (!(std::fabs(e) < 0x1p-18f)) return inverseSqrtFrom(n, yBits);
  const float c = mulRn(y, mulRn(e, fmaRn(0.375f, e, 0.5f)));
  const float f = addRn(y, c), d = addRn(c, -addRn(f, -y));  // y + c = f + d exactly (Fast2Sum)
  // Half the gap to the next float (2^(E - 24) for f in [2^E, 2^(E + 1))), less the margin; where f
  // is a power of two the gap below is half as wide, so those go the exact way.
  const uint32_t fBits = bitsOfFloat(f);
  const float room = mulRn(floatOfBits((fBits & 0x7F800000u) - (24u << 23)), 1.f - 0x1p-12f);
  if ((fBits & 0x7FFFFFu) != 0 && std::fabs(d) < room) return f;
  return inverseSqrtFrom(n, fBits);
}

// OpenCV's area * norm < 0.1, the product and the comparison in double, for an area below 2^24. The
// product x is exact in double and never equals the double 0.1; p, x rounded to float, is below
// the float 0.1f (0.1 + 1.5e-9) only where x is below 0.1f - 3.7e-9 (half a float there), and above
// it only where x is above 0.1f + 3.7e-9: either way on the same side of 0.1 as x. Where p is 0.1f,
// x = p + pl exactly, and x < 0.1 where pl < 0.1 - 0.1f, a double between two floats: where pl is
// below the upper one, kTenthRest.
constexpr float kTenthRest = -0x1.999998p-30f;  // the float just above 0.1 - 0.1f = -53687091 / 2^55
PP_HD bool belowTenth(int area, float norm) {
  const float a = static_cast<float>(area), p = mulRn(a, norm);
  if (p != 0.1f) return p < 0.1f;
  return fmaRn(a, norm, -p) < kTenthRest;
}

}  // namespace pp::faces
