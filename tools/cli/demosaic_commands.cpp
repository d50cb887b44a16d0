// polarpipe synth | demosaic: the demosaic stage on files.
#include <filesystem>
#include <iostream>

#include "pipeline/image_io.hpp"
#include "stages/demosaic/synth.hpp"
#include "tools/cli/commands.hpp"

namespace pp::cli {

namespace {

using polar::Mosaic;
using polar::RawFormat;

Mosaic mosaicOf(const std::string& name) { return name == "polar_mono" ? Mosaic::mono : Mosaic::rggb; }

struct SynthArgs {
  std::string picture, mosaic = "polar_rggb", outDir, aolp = "ramp", dolp = "ramp";
  int bits = 8;
};

int synth(const SynthArgs& a) {
  demosaic::SynthOptions o;
  o.mosaic = mosaicOf(a.mosaic);
  o.sixteenBit = a.bits == 16;
  o.aolp = a.aolp;
  o.dolp = a.dolp;
  demosaic::SynthFrame f = demosaic::synthesize(readImage(a.picture), o);
  std::filesystem::create_directories(a.outDir);
  auto out = [&](const std::string& name) { return (std::filesystem::path(a.outDir) / name).string(); };
  writeImage(out("raw.pgm"), f.raw);
  for (int k = 0; k < 4; ++k) writeImage(out(std::string("truth_") + demosaic::angleName(k) + ".png"), f.angle[k]);
  writeImage(out("truth_s0.pfm"), f.s0);
  writeImage(out("truth_dolp.pfm"), f.dolp);
  writeImage(out("truth_aolp.pfm"), f.aolp);
  std::cout << "raw " << out("raw.pgm") << " (" << f.raw.width() << "x" << f.raw.height() << ", " << a.bits << "-bit "
            << a.mosaic << "), truth in " << a.outDir << "\n";
  return 0;
}

struct DemosaicArgs {
  std::string raw, mosaic = "polar_rggb", outDir, backend = "auto", resolution = "half";
  std::string pixelFormat = "mono8";
  std::vector<std::string> outputs = {"angles", "s0", "dolp", "aolp", "aolp_visual"};
};

int demosaicFile(const DemosaicArgs& a) {
  demosaic::Settings s;
  s.mosaic = mosaicOf(a.mosaic);
  s.fullResolution = a.resolution == "full";
  s.format = demosaic::rawFormatOf(a.pixelFormat);
  Image raw = readImage(a.raw);
  bool wide = polar::isWide(s.format);
  if (raw.format() != Format{wide ? Depth::u16 : Depth::u8, 1})
    throw std::invalid_argument(a.raw + " is " + toString(raw.format()) + ", but --pixel-format " + a.pixelFormat +
                                " needs a " + (wide ? "16" : "8") + "-bit single-channel file");
  int width = 0, height = 0;
  std::string problem = demosaic::checkRawSize(s, raw.width(), raw.height(), width, height);
  if (!problem.empty()) throw std::invalid_argument(a.raw + ": " + problem);  // named with the file here
  bool cuda = a.backend == "cuda" || (a.backend == "auto" && gpuAvailable());
  if (cuda && !gpuAvailable()) throw std::invalid_argument("--backend cuda, but " + gpuDescription());

  std::filesystem::create_directories(a.outDir);
  for (const auto& [name, plane] : demosaic::runToHost(s, raw, a.outputs, cuda)) {
    std::string file =
        (std::filesystem::path(a.outDir) / (name + (plane.format().depth == Depth::f32 ? ".pfm" : ".png"))).string();
    writeImage(file, plane);
    std::cout << file << "\n";
  }
  return 0;
}

}  // namespace

void addDemosaicCommands(CLI::App& app, int& exitCode) {
  auto sa = std::make_shared<SynthArgs>();
  auto* synthCmd = app.add_subcommand("synth",
                                      "make a raw polarization mosaic with known truth from any picture (each picture "
                                      "pixel becomes a 2x2 polarizer block)");
  synthCmd->add_option("PICTURE", sa->picture, "8-bit picture (PNG, JPEG, PGM)")->required()->check(CLI::ExistingFile);
  synthCmd->add_option("--mosaic", sa->mosaic, "sensor layout")
      ->check(CLI::IsMember({"polar_rggb", "polar_mono"}))
      ->capture_default_str();
  synthCmd->add_option("--out-dir", sa->outDir, "where raw.pgm and the truth_* images go")->required();
  synthCmd->add_option("--aolp", sa->aolp, "AoLP field: ramp (0 to pi left to right), radial, or a constant in degrees")
      ->capture_default_str();
  synthCmd->add_option("--dolp", sa->dolp, "DoLP field: ramp (0.1 to 0.9 top to bottom) or a constant in [0, 1]")
      ->capture_default_str();
  synthCmd->add_option("--bits", sa->bits, "raw bit depth")->check(CLI::IsMember({8, 16}))->capture_default_str();
  synthCmd->callback([sa, &exitCode] { exitCode = synth(*sa); });

  auto da = std::make_shared<DemosaicArgs>();
  auto* dem = app.add_subcommand(
      "demosaic",
      "demosaic a raw polarization frame (PGM/PNG) into angle images, S0, DoLP, AoLP and the AoLP/DoLP visual");
  dem->add_option("RAW", da->raw,
                  "raw mosaic, 8 or 16-bit single channel (packed formats: the camera's bytes as an 8-bit image)")
      ->required()
      ->check(CLI::ExistingFile);
  dem->add_option("--mosaic", da->mosaic, "sensor layout (IMX250MYR: polar_rggb, IMX250MZR: polar_mono)")
      ->check(CLI::IsMember({"polar_rggb", "polar_mono"}))
      ->capture_default_str();
  dem->add_option("--pixel-format", da->pixelFormat,
                  "raw samples (mono10p, mono12p: PFNC packing; mono10packed, mono12packed: GigE Vision's older one)")
      ->check(CLI::IsMember(demosaic::rawFormatNames()))
      ->capture_default_str();
  dem->add_option("--resolution", da->resolution, "polar_mono: half (super-pixels) or full")
      ->check(CLI::IsMember({"half", "full"}))
      ->capture_default_str();
  dem->add_option("--outputs", da->outputs, "any of angles, s0, s1, s2, dolp, aolp, aolp_visual")
      ->delimiter(',')
      ->check(CLI::IsMember(demosaic::outputNames()))
      ->capture_default_str();
  dem->add_option("--out-dir", da->outDir, "folder for angle_*.png, s0.png, s1/s2/dolp/aolp .pfm, aolp_visual.png")
      ->required();
  dem->add_option("--backend", da->backend, "cuda, cpu, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  dem->callback([da, &exitCode] { exitCode = demosaicFile(*da); });
}

}  // namespace pp::cli
