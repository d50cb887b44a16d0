// dof's parameters, declared once for the YAML schema and the command line.
#include "stages/dof/dof.hpp"

namespace pp::dof {

const ParamSchema<DofParams>& dofParamSchema() {
  static const auto schema =
      ParamSchema<DofParams>()
          .add("focus", &DofParams::focus,
               "what is sharp: focus_depth, the depth at focus_pixel, or the nearest face (faces input; focus_depth "
               "until one is seen)",
               oneOf({"depth", "pixel", "faces"}))
          .add("focus_depth", &DofParams::focus_depth, "depth in focus (the depth plane's units)", numberIn(0, 1e9))
          .add("focus_pixel", &DofParams::focus_pixel, "[x, y] of the image whose depth is in focus",
               intListOf(2, 0, 1 << 20))
          .add("k", &DofParams::k, "blur radius per unit of depth away from focus", numberIn(0, 1e9))
          .add("r_max", &DofParams::r_max, "largest blur radius in pixels (Gaussian of 2 r_max + 1 taps)",
               intIn(0, kMaxRadius))
          .add("input", &DofParams::input,
               "the depth input holds depth (f32) or disparity (u16 x16 fixed point, or f32 pixels)",
               oneOf({"depth", "disparity"}))
          .add("baseline_focal", &DofParams::baseline_focal, "disparity input: depth = baseline_focal / disparity",
               numberIn(1e-9, 1e12));
  return schema;
}

Settings settingsOf(const DofParams& p) {
  Settings s;
  s.focusDepth = static_cast<float>(p.focus_depth);
  s.k = static_cast<float>(p.k);
  s.rMax = p.r_max;
  if (p.focus == "pixel") s.focusPixels = {{p.focus_pixel[0], p.focus_pixel[1]}};
  return s;
}

}  // namespace pp::dof
