// The fixed-point bilinear sample that the CPU remap and the CUDA kernel share (OpenCV's
// INTER_BITS = 5: a coordinate becomes round(c * 32); weights are products of 1/32 fractions, so
// exact in 1/1024).
#pragma once
#include <cmath>
#include <cstdint>

#include "cuda/image_view.hpp"

namespace pp::stereo {

struct RemapTap {
  int x0, y0, fx, fy;  // top-left tap and the 1/32 fractions; x0 = INT_MIN: nowhere near the source
};

PP_HD RemapTap remapTap(float mx, float my) {
  if (!(fabsf(mx) < 65536.f && fabsf(my) < 65536.f)) return {-(1 << 30), 0, 0, 0};  // also NaN
#ifdef __CUDA_ARCH__
  int ix = __float2int_rn(mx * 32.f), iy = __float2int_rn(my * 32.f);
#else
  int ix = static_cast<int>(std::nearbyint(mx * 32.f)), iy = static_cast<int>(std::nearbyint(my * 32.f));
#endif
  return {ix >> 5, iy >> 5, ix & 31, iy & 31};
}

PP_HD uint8_t bilinear(const ImageView<const uint8_t>& src, const RemapTap& t, int c) {
  int sum = 512;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      int sx = t.x0 + i, sy = t.y0 + j;
      if (sx < 0 || sy < 0 || sx >= src.width || sy >= src.height) continue;
      int w = (i ? t.fx : 32 - t.fx) * (j ? t.fy : 32 - t.fy);
      sum += w * src.at(sx, sy, c);
    }
  return static_cast<uint8_t>(sum >> 10);
}

}  // namespace pp::stereo
