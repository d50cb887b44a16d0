// polar_synth's parameters, declared once for the YAML schema and the command line.
#include <cmath>

#include "stages/demosaic/synth.hpp"

namespace pp::demosaic {

const ParamSchema<SynthParams>& synthParamSchema() {
  static const auto schema =
      ParamSchema<SynthParams>()
          .add("picture", &SynthParams::picture, "8-bit picture; each pixel becomes one 2x2 polarizer block",
               existingFile())
          .add("mosaic", &SynthParams::mosaic, "sensor layout of the raw frames", oneOf({"polar_rggb", "polar_mono"}))
          .add("bits", &SynthParams::bits, "raw bit depth: 8 (u8 plane, mono8) or 16 (u16 plane, mono16)",
               Rule<int>{"8 or 16", [](const int& b) { return b == 8 || b == 16; }})
          .add("frames", &SynthParams::frames, "frames to produce; 0: endless", intIn(0, 100000000))
          .add("variants", &SynthParams::variants,
               "distinct frames made at start (each a further AoLP turn), then repeated", intIn(1, 256))
          .add("aolp_step_deg", &SynthParams::aolp_step_deg, "AoLP turn per frame, degrees", numberIn(-180, 180))
          .add("aolp", &SynthParams::aolp, "AoLP field: ramp (0 to pi left to right), radial, or degrees")
          .add("dolp", &SynthParams::dolp, "DoLP field: ramp (0.1 to 0.9 top to bottom) or a value in [0, 1]")
          .add("reflection", &SynthParams::reflection,
               "8-bit picture reflected off glass in front of the scene (tiled), fully polarized; none: no glass",
               existingFile())
          .add("reflection_aolp_deg", &SynthParams::reflection_aolp_deg,
               "the angle the reflection is polarized at, degrees", numberIn(0, 180))
          .add("reflection_strength", &SynthParams::reflection_strength,
               "the reflection's share of the light (the scene keeps the rest)", numberIn(0, 1));
  return schema;
}

SynthOptions optionsOf(const SynthParams& p) {
  SynthOptions o;
  o.mosaic = p.mosaic == "polar_mono" ? Mosaic::mono : Mosaic::rggb;
  o.sixteenBit = p.bits == 16;
  o.aolp = p.aolp;
  o.dolp = p.dolp;
  o.reflectionAolp = p.reflection_aolp_deg * M_PI / 180;
  o.reflectionStrength = p.reflection_strength;
  return o;
}

}  // namespace pp::demosaic
