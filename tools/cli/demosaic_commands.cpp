// polarpipe synth | demosaic: the demosaic stage on files.
#include <filesystem>
#include <iostream>

#include "pipeline/image_io.hpp"
#include "stages/demosaic/synth.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/param_options.hpp"

namespace pp::cli {

namespace {

struct SynthArgs {
  std::string picture, outDir;
  std::shared_ptr<demosaic::SynthParams> p = std::make_shared<demosaic::SynthParams>();
};

int synth(const SynthArgs& a) {
  demosaic::SynthOptions o = demosaic::optionsOf(*a.p);
  Image reflection;
  if (!a.p->reflection.empty()) {
    reflection = readImage(a.p->reflection.value);
    o.reflection = &reflection;
  }
  demosaic::SynthFrame f = demosaic::synthesize(readImage(a.picture), o);
  std::filesystem::create_directories(a.outDir);
  auto out = [&](const std::string& name) { return (std::filesystem::path(a.outDir) / name).string(); };
  writeImage(out("raw.pgm"), f.raw);
  for (int k = 0; k < 4; ++k) writeImage(out(std::string("truth_") + demosaic::angleName(k) + ".png"), f.angle[k]);
  writeImage(out("truth_s0.pfm"), f.s0);
  writeImage(out("truth_dolp.pfm"), f.dolp);
  writeImage(out("truth_aolp.pfm"), f.aolp);
  std::cout << "raw " << out("raw.pgm") << " (" << f.raw.width() << "x" << f.raw.height() << ", " << a.p->bits
            << "-bit " << a.p->mosaic << "), truth in " << a.outDir << "\n";
  return 0;
}

struct DemosaicArgs {
  std::string raw, outDir, backend = "auto";
  std::shared_ptr<demosaic::DemosaicParams> p = [] {
    auto p = std::make_shared<demosaic::DemosaicParams>();
    p->outputs = {"angles", "s0", "dolp", "aolp", "aolp_visual"};
    return p;
  }();
};

int demosaicFile(const DemosaicArgs& a) {
  demosaic::Settings s = demosaic::settingsOf(*a.p);
  Image raw = readImage(a.raw);
  bool wide = polar::isWide(s.format);
  if (raw.format() != Format{wide ? Depth::u16 : Depth::u8, 1})
    throw std::invalid_argument(a.raw + " is " + toString(raw.format()) + ", but --pixel-format " + a.p->pixel_format +
                                " needs a " + (wide ? "16" : "8") + "-bit single-channel file");
  int width = 0, height = 0;
  std::string problem = demosaic::checkRawSize(s, raw.width(), raw.height(), width, height);
  if (!problem.empty()) throw std::invalid_argument(a.raw + ": " + problem);  // named with the file here
  bool cuda = useCuda(a.backend);

  std::filesystem::create_directories(a.outDir);
  for (const auto& [name, plane] : demosaic::runToHost(s, raw, a.p->outputs, cuda)) {
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
  addParamOptions(synthCmd, demosaic::synthParamSchema(), sa->p,
                  {"mosaic", "bits", "aolp", "dolp", "reflection", "reflection_aolp_deg", "reflection_strength"});
  synthCmd->add_option("--out-dir", sa->outDir, "where raw.pgm and the truth_* images go")->required();
  synthCmd->callback([sa, &exitCode] { exitCode = synth(*sa); });

  auto da = std::make_shared<DemosaicArgs>();
  auto* dem = app.add_subcommand(
      "demosaic",
      "demosaic a raw polarization frame (PGM/PNG) into angle images, S0, DoLP, AoLP and the AoLP/DoLP visual");
  dem->add_option("RAW", da->raw,
                  "raw mosaic, 8 or 16-bit single channel (packed formats: the camera's bytes as an 8-bit image)")
      ->required()
      ->check(CLI::ExistingFile);
  addParamOptions(dem, demosaic::demosaicParamSchema(), da->p);
  dem->add_option("--out-dir", da->outDir, "folder for angle_*.png, s0.png, s1/s2/dolp/aolp .pfm, aolp_visual.png")
      ->required();
  addBackendOption(dem, da->backend);
  dem->callback([da, &exitCode] { exitCode = demosaicFile(*da); });
}

}  // namespace pp::cli
