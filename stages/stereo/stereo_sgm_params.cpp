// Semi-global matching's parameters: declared here once for the YAML schema, the command line and
// checkParams; the kernels take the SgmParams they fill.
#include <stdexcept>

#include "stages/stereo/sgm.hpp"

namespace pp::stereo {

const ParamSchema<SgmParams>& sgmParamSchema() {
  static const auto schema =
      ParamSchema<SgmParams>()
          .add("disparities", &SgmParams::disparities, "disparity candidates",
               Rule<int>{"64, 128 or 256", [](const int& d) { return d == 64 || d == 128 || d == 256; }})
          .add("min_disparity", &SgmParams::minDisparity, "disparity of the first candidate",
               intIn(0, kMaxMinDisparity))
          .add("paths", &SgmParams::paths, "aggregation directions: 4 (rows, columns) or 8 (and diagonals)",
               Rule<int>{"4 or 8", [](const int& n) { return n == 4 || n == 8; }})
          .add("p1", &SgmParams::p1, "penalty of a one-step disparity change", intIn(0, kMaxPenalty))
          .add("p2", &SgmParams::p2, "penalty of a larger change (p1..224)", intIn(0, kMaxPenalty))
          .add("p2_adaptive", &SgmParams::p2Adaptive, "P2 divided by the intensity step along the path (at least P1)")
          .add("uniqueness", &SgmParams::uniqueness,
               "percent by which the best cost must beat the second best (0: off)", intIn(0, 99))
          .add("lr_max_diff", &SgmParams::lrMaxDiff, "largest left-right disparity difference kept (-1: no check)",
               intIn(-1, 255))
          .add("subpixel", &SgmParams::subpixel, "parabola sub-pixel refinement (1/16 pixel)")
          .add("fill", &SgmParams::fill,
               "invalid pixels take the background disparity of their row (their confidence is 0)")
          .add("median", &SgmParams::median, "3x3 median of the valid disparities")
          .addChoice("sweeps", &SgmParams::sweeps,
                     "the directions from above and below: with 8 paths summed on chip in two sweeps of column "
                     "bands (a third of the volume traffic), else the rows walked around "
                     "their walkers (the volume stored once and read once, no winner-takes-all pass); auto: the "
                     "sweeps where an SM's band is at least " +
                         std::to_string(kSweepsBandWidth) + " columns wide, else the rows around where an SM has " +
                         std::to_string(rowsAroundPixelsPerSm(4, 128)) + " pixels of the image (" +
                         std::to_string(rowsAroundPixelsPerSm(4, 256)) + " with 4 paths at 256 disparities, " +
                         std::to_string(rowsAroundPixelsPerSm(8, 256)) +
                         " with 8 paths at 256; below, the walkers), else the walkers (a big GPU's many SMs, "
                         "where they are faster); "
                         "the graph's description names the one taken and why",
                     {{"auto", Sweeps::automatic}, {"true", Sweeps::on}, {"false", Sweeps::off}});
  return schema;
}

void checkParams(const SgmParams& p) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("stereo_sgm: " + what); };
  if (p.disparities != 64 && p.disparities != 128 && p.disparities != 256)
    bad("disparities must be 64, 128 or 256, not " + std::to_string(p.disparities));
  if (p.minDisparity < 0 || p.minDisparity > kMaxMinDisparity)
    bad("min_disparity must be in 0.." + std::to_string(kMaxMinDisparity) + ", not " + std::to_string(p.minDisparity));
  if (p.minDisparity + p.disparities >= kDisparityLimit)
    bad("min_disparity + disparities must stay below " + std::to_string(kDisparityLimit));
  if (p.paths != 4 && p.paths != 8) bad("paths must be 4 or 8, not " + std::to_string(p.paths));
  if (p.p1 < 0 || p.p1 > kMaxPenalty) bad("p1 must be in 0..224, not " + std::to_string(p.p1));
  if (p.p2 < p.p1 || p.p2 > kMaxPenalty)
    bad("p2 must be in p1..224 (path costs stay in 8 bits), not " + std::to_string(p.p2));
  if (p.uniqueness < 0 || p.uniqueness > 99)
    bad("uniqueness must be a percentage in 0..99, not " + std::to_string(p.uniqueness));
  if (p.lrMaxDiff > 255) bad("lr_max_diff must be at most 255 (or < 0: no check), not " + std::to_string(p.lrMaxDiff));
}

}  // namespace pp::stereo
