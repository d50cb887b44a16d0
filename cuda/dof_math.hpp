// What the dof stage's CPU reference and CUDA gather compute alike, the same float operations on
// both, so that they mask the same taps: whether a depth is valid, a pixel's blur radius and the
// near edge of its depth band.
#pragma once
#include <cmath>

#include "cuda/image_view.hpp"  // PP_HD

namespace pp::dof {

// Invalid depth: NaN, infinite or <= 0.
PP_HD bool validDepth(float z) {
#if defined(__CUDA_ARCH__)
  return isfinite(z) && z > 0.f;
#else
  return std::isfinite(z) && z > 0.f;
#endif
}

// rho = min(k |z - focus|, r_max); invalid depth counts as far: r_max.
PP_HD float blurRadius(float focus, float k, int rMax, float z) {
  if (!validDepth(z)) return static_cast<float>(rMax);
  return fminf(k * fabsf(z - focus), static_cast<float>(rMax));
}

// The near edge of the depth band of a pixel at depth z whose lower radius is r0; it gathers only
// from depths at or beyond it (invalid depth: +inf, gathers only from the far). Band 0 starts at
// the focus even where k is 0 and the bands have no width (0 / k would be NaN).
PP_HD float bandEdge(float focus, float k, float z, int r0) {
  if (!validDepth(z)) return INFINITY;
  const float behind = r0 == 0 ? 0.f : static_cast<float>(r0) / k;
  const float edge = z >= focus ? focus + behind : focus - static_cast<float>(r0 + 1) / k;
  return fminf(edge, z);  // beyond r_max in front, the band reaches the pixel itself
}

}  // namespace pp::dof
