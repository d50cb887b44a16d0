// polarpipe dof: depth of field on files.
#include <iostream>

#include "pipeline/image_io.hpp"
#include "stages/dof/dof.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/param_options.hpp"

namespace pp::cli {

namespace {

struct DofArgs {
  std::string image, depth, out, backend = "auto";
  std::shared_ptr<dof::DofParams> p = std::make_shared<dof::DofParams>();
};

int dofFile(const DofArgs& a) {
  bool cuda = useCuda(a.backend);
  bool disparity = a.p->input == "disparity";
  float baselineFocal = static_cast<float>(a.p->baseline_focal);
  Image image = readImage(a.image);
  if (image.format() != Format{Depth::u8, 3} && image.format() != Format{Depth::u8, 1})
    throw std::invalid_argument(a.image + " is " + toString(image.format()) + "; dof takes 8-bit grey or RGB pictures");
  Image plane = readImage(a.depth);
  if (plane.format() != Format{Depth::f32, 1} && !(disparity && plane.format() == Format{Depth::u16, 1}))
    throw std::invalid_argument(a.depth + " is " + toString(plane.format()) +
                                "; depth is a float PFM, or with --input disparity a 16-bit PNG (x16) or float PFM");
  Image depth({Depth::f32, 1}, image.width(), image.height(), MemoryKind::host);
  try {
    dof::depthForImage(plane, disparity, baselineFocal, depth);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(a.depth + ": " + e.what());
  }
  dof::Settings s = dof::settingsOf(*a.p);
  for (const auto& [x, y] : s.focusPixels)
    if (x >= image.width() || y >= image.height())
      throw std::invalid_argument("--focus-pixel " + std::to_string(x) + "," + std::to_string(y) + " is outside the " +
                                  std::to_string(image.width()) + "x" + std::to_string(image.height()) + " image");
  Image out(image.format(), image.width(), image.height(), MemoryKind::host);
  if (cuda) {
    Stream stream;
    Image deviceImage(image.format(), image.width(), image.height(), MemoryKind::device),
        devicePlane(plane.format(), plane.width(), plane.height(), MemoryKind::device);
    Image deviceOut(image.format(), image.width(), image.height(), MemoryKind::device);
    copyImage(image, deviceImage, stream.handle());
    copyImage(plane, devicePlane, stream.handle());
    dof::renderCuda(s, deviceImage, devicePlane, disparity, baselineFocal, deviceOut, stream.handle());
    copyImage(deviceOut, out, stream.handle());
    stream.synchronize();
  } else {
    dof::renderCpu(s, image, depth, out);
  }
  writeImage(a.out, out);
  std::cout << a.out << " (focus depth " << dof::resolveFocus(s, depth) << ", " << (cuda ? "cuda" : "cpu") << ")\n";
  return 0;
}

}  // namespace

void addDofCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<DofArgs>();
  auto* cmd = app.add_subcommand("dof", "synthetic depth of field from a picture and its depth (or disparity) map");
  cmd->add_option("IMAGE", a->image, "8-bit grey or RGB picture")->required()->check(CLI::ExistingFile);
  cmd->add_option(
         "DEPTH", a->depth,
         "depth as PFM (float), or with --input disparity a 16-bit PNG (disparity x16) or PFM; the image's size or "
         "an integer multiple")
      ->required()
      ->check(CLI::ExistingFile);
  addParamOptions(cmd, dof::dofParamSchema(), a->p,
                  {"focus_depth", "focus_pixel", "k", "r_max", "input", "baseline_focal"});
  auto* depthOption = cmd->get_option("--focus-depth");
  auto* pixelOption = cmd->get_option("--focus-pixel");
  depthOption->excludes(pixelOption);
  addBackendOption(cmd, a->backend);
  cmd->add_option("--out", a->out, "output image (.png)")->required();
  cmd->callback([a, cmd, &exitCode, depthOption, pixelOption] {
    if (depthOption->count() == 0 && pixelOption->count() == 0)
      throw CLI::RequiredError("--focus-depth or --focus-pixel");
    a->p->focus = pixelOption->count() ? "pixel" : "depth";
    exitCode = dofFile(*a);
  });
}

}  // namespace pp::cli
