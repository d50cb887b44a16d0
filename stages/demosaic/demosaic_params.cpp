// demosaic's parameters, declared once for the YAML schema and the command line.
#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "stages/demosaic/demosaic.hpp"

namespace pp::demosaic {

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
          .add("angles", &DemosaicParams::angles,
               "polarizer angle at each pixel of the 2x2 block, row-major (IMX250MZR and MYR: 90, 45, 135, 0)",
               permutationOf({0, 45, 90, 135}))
          .add("bayer", &DemosaicParams::bayer, "colour of each 2x2 block over the 4x4 period (polar_rggb)",
               oneOf({"rggb", "bggr", "grbg", "gbrg"}))
          .add("resolution", &DemosaicParams::resolution,
               "polar_mono: half (super-pixels) or full (each angle interpolated)", oneOf({"half", "full"}))
          .add("outputs", &DemosaicParams::outputs,
               "planes to produce (angles gives angle_0, angle_45, angle_90, angle_135)", listOf(outputNames()));
  return schema;
}

Settings settingsOf(const DemosaicParams& p) {
  Settings s;
  s.mosaic = p.mosaic == "polar_mono" ? Mosaic::mono : Mosaic::rggb;
  s.format = rawFormatOf(p.pixel_format);
  for (int i = 0; i < 4; ++i) s.layout.angleAt[i] = static_cast<uint8_t>(p.angles[static_cast<size_t>(i)] / 45);
  static const std::map<std::string, std::array<uint8_t, 4>> bayers = {
      {"rggb", {polar::R, polar::G, polar::G, polar::B}},
      {"bggr", {polar::B, polar::G, polar::G, polar::R}},
      {"grbg", {polar::G, polar::R, polar::B, polar::G}},
      {"gbrg", {polar::G, polar::B, polar::R, polar::G}}};
  std::copy_n(bayers.at(p.bayer).begin(), 4, s.layout.colourAt);
  s.fullResolution = p.resolution == "full";
  if (s.fullResolution && s.mosaic == Mosaic::rggb)
    throw std::invalid_argument("resolution full is for polar_mono; polar_rggb demosaics at half resolution");
  if (p.outputs.empty()) throw std::invalid_argument("outputs is empty: ask for at least one plane");
  return s;
}

}  // namespace pp::demosaic
