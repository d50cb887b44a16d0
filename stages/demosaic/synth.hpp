// Synthetic polarization frames with known truth: any picture becomes the scene's S0/2, smooth
// AoLP and DoLP fields polarize it, and each raw pixel samples I(theta) = S0/2 (1 + DoLP cos 2(theta - AoLP))
// for its polarizer angle and colour. Each picture pixel is one 2x2 polarizer block. Optionally the
// scene is seen through glass: a second picture R (tiled) is reflected off it, fully polarized at
// one angle phi, and the sensor sees (1 - a) I(theta) + a R/2 (1 + cos 2(theta - phi)).
#pragma once
#include <string>

#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

struct SynthOptions {
  Mosaic mosaic = Mosaic::rggb;
  polar::Layout layout;
  bool sixteenBit = false;            // 16-bit raw (mono16) instead of 8-bit
  std::string aolp = "ramp";          // ramp (0..pi left to right), radial, or degrees
  std::string dolp = "ramp";          // ramp (0.1..0.9 top to bottom), or a value in [0, 1]
  double aolpOffset = 0;              // radians added to the AoLP field (moving sequences)
  const Image* reflection = nullptr;  // 8-bit picture reflected off the glass, or none
  double reflectionAolp = 0;          // radians: the angle the reflection is polarized at
  double reflectionStrength = 0.5;    // a: the reflection's share of the light
};

// What the polar_synth source and `polarpipe synth` take, declared once as YAML keys and
// command-line options.
struct SynthParams {
  Path picture;
  std::string mosaic = "polar_rggb";
  int bits = 8;
  int frames = 24;
  int variants = 8;          // distinct frames made up front, then repeated
  double aolp_step_deg = 5;  // AoLP turn from one frame to the next
  std::string aolp = "ramp";
  std::string dolp = "ramp";
  Path reflection;
  double reflection_aolp_deg = 60;
  double reflection_strength = 0.5;
};
const ParamSchema<SynthParams>& synthParamSchema();
// The first frame's options (no AoLP turn yet); `reflection` must be set to the picture read from
// p.reflection, when there is one.
SynthOptions optionsOf(const SynthParams& p);

struct SynthFrame {
  Image raw;             // 2x the picture: u8x1 or u16x1
  Image angle[4];        // truth at half resolution, 0, 45, 90, 135: raw depth, 1 or 3 channels
  Image s0, dolp, aolp;  // truth, f32x1: S0 (luminance for colour), DoLP, AoLP in [0, pi)
};

// Throws std::invalid_argument naming a bad field option.
SynthFrame synthesize(const Image& picture, const SynthOptions& options);

}  // namespace pp::demosaic
