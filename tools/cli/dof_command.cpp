// polarpipe dof: depth of field on files.
#include <iostream>

#include "pipeline/image_io.hpp"
#include "stages/dof/dof.hpp"
#include "tools/cli/commands.hpp"

namespace pp::cli {

namespace {

struct DofArgs {
  std::string image, depth, out, backend = "auto";
  bool disparity = false;
  double baselineFocal = 1, focusDepth = -1, k = 9;
  std::vector<int> focusPixel;
  int rMax = 9;
};

int dofFile(const DofArgs& a) {
  bool cuda = a.backend == "cuda" || (a.backend == "auto" && gpuAvailable());
  if (cuda && !gpuAvailable()) throw std::invalid_argument("--backend cuda, but " + gpuDescription());
  Image image = readImage(a.image);
  if (image.format() != Format{Depth::u8, 3} && image.format() != Format{Depth::u8, 1})
    throw std::invalid_argument(a.image + " is " + toString(image.format()) + "; dof takes 8-bit grey or RGB pictures");
  Image plane = readImage(a.depth);
  if (plane.format() != Format{Depth::f32, 1} && !(a.disparity && plane.format() == Format{Depth::u16, 1}))
    throw std::invalid_argument(a.depth + " is " + toString(plane.format()) +
                                "; depth is a float PFM, or with --disparity a 16-bit PNG (x16) or float PFM");
  Image depth({Depth::f32, 1}, image.width(), image.height(), MemoryKind::host);
  try {
    dof::depthForImage(plane, a.disparity, static_cast<float>(a.baselineFocal), depth);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(a.depth + ": " + e.what());
  }
  dof::Settings s;
  s.k = static_cast<float>(a.k);
  s.rMax = a.rMax;
  s.focusDepth = static_cast<float>(a.focusDepth);
  if (!a.focusPixel.empty()) {
    int x = a.focusPixel[0], y = a.focusPixel[1];
    if (x < 0 || y < 0 || x >= image.width() || y >= image.height())
      throw std::invalid_argument("--focus-pixel " + std::to_string(x) + "," + std::to_string(y) + " is outside the " +
                                  std::to_string(image.width()) + "x" + std::to_string(image.height()) + " image");
    s.focusPixels = {{x, y}};
  }
  Image out(image.format(), image.width(), image.height(), MemoryKind::host);
  if (cuda) {
    Stream stream;
    Image deviceImage(image.format(), image.width(), image.height(), MemoryKind::device),
        devicePlane(plane.format(), plane.width(), plane.height(), MemoryKind::device);
    Image deviceOut(image.format(), image.width(), image.height(), MemoryKind::device);
    copyImage(image, deviceImage, stream.handle());
    copyImage(plane, devicePlane, stream.handle());
    dof::renderCuda(s, deviceImage, devicePlane, a.disparity, static_cast<float>(a.baselineFocal), deviceOut,
                    stream.handle());
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
  cmd->add_option("DEPTH", a->depth,
                  "depth as PFM (float), or with --disparity a 16-bit PNG (disparity x16) or PFM; the image's size or "
                  "an integer multiple")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--disparity", a->disparity, "DEPTH holds disparity: depth = --baseline-focal / disparity");
  cmd->add_option("--baseline-focal", a->baselineFocal, "baseline x focal length, for --disparity")
      ->check(finiteIn(1e-9, 1e12))
      ->capture_default_str();
  auto* depthOption = cmd->add_option("--focus-depth", a->focusDepth, "depth in focus")->check(finiteIn(0, 1e9));
  auto* pixelOption = cmd->add_option("--focus-pixel", a->focusPixel, "X,Y: the depth at this pixel is in focus")
                          ->delimiter(',')
                          ->expected(2);
  depthOption->excludes(pixelOption);
  cmd->add_option("--k", a->k, "blur radius per unit of depth away from focus")
      ->check(finiteIn(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--r-max", a->rMax, "largest blur radius in pixels")
      ->check(CLI::Range(0, dof::kMaxRadius))
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "cuda, cpu, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "output image (.png)")->required();
  cmd->callback([a, cmd, &exitCode, depthOption, pixelOption] {
    if (depthOption->count() == 0 && pixelOption->count() == 0)
      throw CLI::RequiredError("--focus-depth or --focus-pixel");
    exitCode = dofFile(*a);
  });
}

}  // namespace pp::cli
