// demosaic's parameters, declared once for the YAML schema and the command line.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

namespace {
std::string outputsHelp() {
  std::string help = "planes to produce (colour sensors: DoLP, AoLP and normals from the luminance):";
  for (const auto& [name, meaning] : outputMeanings()) help += "\n          " + name + ": " + meaning;
  return help;
}
}  // namespace

const ParamSchema<DemosaicParams>& demosaicParamSchema() {
  static const auto schema =
      ParamSchema<DemosaicParams>()
          .add("mosaic", &DemosaicParams::mosaic,
               "polar_mono (IMX250MZR) or polar_rggb (IMX250MYR: 2x2 polarizer blocks on an RGGB grid)",
               oneOf({"polar_mono", "polar_rggb"}))
          .add("pixel_format", &DemosaicParams::pixel_format,
               "raw samples: mono8; mono10, mono12, mono16 (u16 plane); packed as the camera sends them (u8 plane): "
               "mono10p, mono12p (PFNC), mono10packed, mono12packed (GigE Vision's older packing)",
               oneOf(rawFormatNames()))
          .add("depth", &DemosaicParams::depth,
               "planes in the samples' range: keep (u8 for mono8, u16 for 10 to 16-bit raw) or u8 (each sample's top "
               "8 bits, as the camera's Mono8 would give, demosaiced as 8-bit raw: for 8-bit stages such as "
               "stereo_sgm and face_detect, while the raw frames keep every bit)",
               oneOf({"keep", "u8"}))
          .add("angles", &DemosaicParams::angles,
               "polarizer angle at each pixel of the 2x2 block, row-major (IMX250MZR and MYR: 90, 45, 135, 0)",
               permutationOf({0, 45, 90, 135}))
          .add("bayer", &DemosaicParams::bayer, "colour of each 2x2 block over the 4x4 period (polar_rggb)",
               oneOf({"rggb", "bggr", "grbg", "gbrg"}))
          .add("resolution", &DemosaicParams::resolution,
               "polar_mono: half (super-pixels) or full (each angle interpolated)", oneOf({"half", "full"}))
          .add("outputs", &DemosaicParams::outputs, outputsHelp(), listOf(outputNames()))
          .add("polarizer_deg", &DemosaicParams::polarizer_deg,
               "output polarizer: the angle of the virtual linear polarizer, degrees (0: along the rows, 90: the "
               "columns)",
               numberIn(-360, 360))
          .add("refractive_index", &DemosaicParams::refractive_index,
               "output normals: the surface's refractive index (glass, plastics and paint about 1.5)",
               numberIn(1.01, 4))
          .add("min_dolp", &DemosaicParams::min_dolp,
               "output normals: pixels with a DoLP below this have no normal (0, 0, 0; black in normals_visual)",
               numberIn(0, 1));
  return schema;
}

Settings settingsOf(const DemosaicParams& p) {
  Settings s;
  s.mosaic = p.mosaic == "polar_mono" ? Mosaic::mono : Mosaic::rggb;
  s.format = rawFormatOf(p.pixel_format);
  if (p.depth == "u8") s.sampleShift = static_cast<uint8_t>(polar::sampleBits(s.format) - 8);
  for (int i = 0; i < 4; ++i) s.layout.angleAt[i] = static_cast<uint8_t>(p.angles[static_cast<size_t>(i)] / 45);
  static const std::map<std::string, std::array<uint8_t, 4>> bayers = {
      {"rggb", {polar::R, polar::G, polar::G, polar::B}},
      {"bggr", {polar::B, polar::G, polar::G, polar::R}},
      {"grbg", {polar::G, polar::R, polar::B, polar::G}},
      {"gbrg", {polar::G, polar::B, polar::R, polar::G}}};
  std::copy_n(bayers.at(p.bayer).begin(), 4, s.layout.colourAt);
  s.fullResolution = p.resolution == "full";
  double twice = 2 * p.polarizer_deg * M_PI / 180;
  s.polarizerCos = static_cast<float>(std::cos(twice));
  s.polarizerSin = static_cast<float>(std::sin(twice));
  s.refractiveIndex = static_cast<float>(p.refractive_index);
  s.minDolp = static_cast<float>(p.min_dolp);
  if (s.fullResolution && s.mosaic == Mosaic::rggb)
    throw std::invalid_argument("resolution full is for polar_mono; polar_rggb demosaics at half resolution");
  if (p.outputs.empty()) throw std::invalid_argument("outputs is empty: ask for at least one plane");
  return s;
}

}  // namespace pp::demosaic
