// dof: synthetic depth of field. Each pixel's blur radius is rho = min(k |Z - Zf|, r_max); the image
// is blurred by Gaussians of integer radius r (2r + 1 taps, sigma r / 2) and each pixel mixes the two
// radii around its rho, so there is no banding between levels. No bleeding of a sharp foreground:
// a pixel gathers only from pixels at or behind the near edge of its own depth band (behind focus:
// Z >= Zf + floor(rho) / k; in front: Z >= Zf - (floor(rho) + 1) / k), normalised by the weights it
// kept. Pixels at the focus depth come out unchanged. Invalid depth (NaN, infinite, <= 0) counts as
// far: fully blurred background.
#pragma once
#include <vector>

#include "pipeline/image.hpp"

namespace pp::dof {

struct Settings {
  float focusDepth = 1.f;
  float k = 9.f;   // radius steps per unit of depth
  int rMax = 9;
};

// The radius of a pixel at depth z (invalid depth: r_max).
float radiusAt(const Settings& s, float z);

// Depth at each pixel of `out` (f32x1, the image's size) from a depth or disparity plane of the
// same size or an integer multiple (nearest sample). Disparity: u16 with 4 fractional bits or f32
// pixels, depth = baselineFocal / disparity, 0 -> invalid. Throws when the sizes do not fit.
void depthForImage(const Image& plane, bool disparity, float baselineFocal, Image& out);

// CPU reference: `image` u8 with 1 or 3 channels, `depth` f32x1 of the same size; `out` like image.
void renderCpu(const Settings& s, const Image& image, const Image& depth, Image& out);

}  // namespace pp::dof
