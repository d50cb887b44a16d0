// Depth of field as one masked gather per pixel: for its two radii around rho it sums the 2D
// Gaussian (the product of the separable taps) over neighbours at or behind its band's near edge,
// divides by the kept weight and mixes the two. The same function as the CPU reference's masked
// separable layers (stages/dof), computed without intermediate images. Where no depth in a block's
// tile lies in front of a warp's band edges, nothing is masked and the warp gathers once with the
// two radii's normalised weights mixed into one, or, where its pixels mix few radii, separably:
// column sums a radius, then row sums of them across the warp's lanes.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/image_view.hpp"
#include "cuda/sgm_types.hpp"

namespace pp::dof {

constexpr int kMaxGatherRadius = 31;

constexpr int kMaxFocusPixels = 16;

// How the depth plane maps to image pixels: the same size or an integer multiple either way
// (nearest sample), depth (f32) or disparity (u16 with 4 fractional bits, or f32 pixels).
struct DepthPlane {
  int scale = 1;
  bool larger = true;  // the plane is `scale` times the image (else the image is)
  bool u16 = false;
  bool disparity = false;
  float baselineFocal = 1.f;
};

struct GatherSettings {
  float focusDepth, k;  // focusDepth: used when no focus pixel has a valid depth
  int rMax;
  int focusCount;  // focus: the nearest valid depth among these pixels
  int focusX[kMaxFocusPixels], focusY[kMaxFocusPixels];
  DepthPlane plane;
};

// Once per process: the taps of every radius 0..31 (2r + 1 each) and their 2D sums, to the device.
void uploadRadiusTaps(const float* taps, int count);

// image and out: u8 with `channels` 1 or 3; depth: the plane's bytes (f32 or u16); device memory.
void launchDofGather(ImageView<const uint8_t> image, ImageView<const uint8_t> depth, ImageView<uint8_t> out,
                     const GatherSettings& s, cudaStream_t stream);

}  // namespace pp::dof
