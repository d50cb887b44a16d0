// dof: synthetic depth of field. Each pixel's blur radius is rho = min(k |Z - Zf|, r_max); the image
// is blurred by Gaussians of integer radius r (2r + 1 taps, sigma r / 2) and each pixel mixes the two
// radii around its rho, so there is no banding between levels. No bleeding of a sharp foreground:
// a pixel gathers only from pixels at or behind the near edge of its own depth band (behind focus:
// Z >= Zf + floor(rho) / k; in front: Z >= Zf - (floor(rho) + 1) / k), normalised by the weights it
// kept. Pixels at the focus depth come out unchanged. Invalid depth (NaN, infinite, <= 0) counts as
// far: fully blurred background.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"

namespace pp::dof {

constexpr int kMaxRadius = 31;  // the largest r_max: 63 taps

struct Settings {
  float focusDepth = 1.f;  // used when no focus pixel has a valid depth
  float k = 9.f;           // radius steps per unit of depth
  int rMax = 9;
  std::vector<std::array<int, 2>> focusPixels;  // focus on the nearest valid depth among these (at most 16)
};

// What the dof stage and `polarpipe dof` take, declared once as YAML keys and command-line options.
struct DofParams {
  std::string focus = "depth";  // depth, pixel or faces
  double focus_depth = 1.0;
  std::vector<int> focus_pixel = {0, 0};
  double k = 9.0;
  int r_max = 9;
  std::string input = "depth";  // depth or disparity
  double baseline_focal = 1.0;
};
const ParamSchema<DofParams>& dofParamSchema();
// The renderer's settings for these parameters (focus pixel set when focus is pixel).
Settings settingsOf(const DofParams& p);

// Throws std::invalid_argument for settings that leave a radius undefined: k or the focus depth
// not finite, k < 0, r_max outside [0, kMaxRadius].
void checkSettings(const Settings& s);

// The radius of a pixel at depth z (invalid depth: r_max).
float radiusAt(const Settings& s, float z);

// How a depth plane of another size maps to the image: `scale` times larger or smaller. Throws
// std::invalid_argument naming both sizes when it is not an integer multiple.
struct PlaneMapping {
  int scale;
  bool larger;
};
PlaneMapping mapPlane(int planeWidth, int planeHeight, int width, int height);

// Depth at each pixel of `out` (f32x1, the image's size) from a depth or disparity plane of the
// same size or an integer multiple (nearest sample). Disparity: u16 with 4 fractional bits or f32
// pixels, depth = baselineFocal / disparity, 0 -> invalid. Throws when the sizes do not fit.
void depthForImage(const Image& plane, bool disparity, float baselineFocal, Image& out);

// The focus depth for a depth map at the image's size.
float resolveFocus(const Settings& s, const Image& depthAtImage);

// CPU reference: `image` u8 with 1 or 3 channels, `depth` f32x1 of the same size; `out` like image.
void renderCpu(const Settings& s, const Image& image, const Image& depth, Image& out);

// CUDA: device images; `plane` is the depth or disparity plane as it comes (any size depthForImage
// takes), read in place. Enqueued on `stream`; the host never waits.
void renderCuda(const Settings& s, const Image& image, const Image& plane, bool disparity, float baselineFocal,
                Image& out, StreamHandle stream);

}  // namespace pp::dof
