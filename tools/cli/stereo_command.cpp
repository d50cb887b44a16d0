// polarpipe stereo: semi-global matching on a picture pair, optionally rectified first.
#include <iostream>

#include "pipeline/image_io.hpp"
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"
#include "stages/stereo/stereo_io.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/param_options.hpp"

namespace pp::cli {

namespace {

struct StereoArgs {
  std::string left, right, calib, out, outPng, backend = "auto";
  std::shared_ptr<stereo::SgmParams> p = std::make_shared<stereo::SgmParams>();
};

// The pair as grey images, rectified when a calibration is given.
std::pair<Image, Image> loadPair(const StereoArgs& a) {
  Image left = readGreyImage(a.left), right = readGreyImage(a.right);
  if (left.width() != right.width() || left.height() != right.height())
    throw std::invalid_argument(a.left + " is " + std::to_string(left.width()) + "x" + std::to_string(left.height()) +
                                " but " + a.right + " is " + std::to_string(right.width()) + "x" +
                                std::to_string(right.height()));
  if (a.calib.empty()) return {std::move(left), std::move(right)};
  stereo::StereoCalibration c = stereo::loadCalibration(a.calib);
  stereo::checkCalibrationSize(c, left.width(), left.height());
  Image rl(left.format(), left.width(), left.height(), MemoryKind::host),
      rr(right.format(), right.width(), right.height(), MemoryKind::host);
  stereo::remapCpu(left, stereo::rectifyMap(c.left, left.width(), left.height()), rl);
  stereo::remapCpu(right, stereo::rectifyMap(c.right, right.width(), right.height()), rr);
  return {std::move(rl), std::move(rr)};
}

int stereoFiles(const StereoArgs& a) {
  bool cuda = useCuda(a.backend);
  stereo::checkParams(*a.p);
  auto [left, right] = loadPair(a);
  Image disparity({Depth::u16, 1}, left.width(), left.height(), MemoryKind::host);
  std::string backend = "cpu";
  if (cuda) {
    Stream stream;
    Image dl(left.format(), left.width(), left.height(), MemoryKind::device),
        dr(right.format(), right.width(), right.height(), MemoryKind::device);
    Image dd(disparity.format(), left.width(), left.height(), MemoryKind::device);
    stereo::SgmCuda sgm(*a.p, left.width(), left.height());
    backend = "cuda: " + sgm.layout();
    copyImage(left, dl, stream.handle());
    copyImage(right, dr, stream.handle());
    sgm.compute(dl, dr, dd, nullptr, stream.handle());
    copyImage(dd, disparity, stream.handle());
    stream.synchronize();
  } else {
    stereo::sgmCpu(*a.p, left, right, disparity);
  }
  writeImage(a.out, stereo::disparityToFloat(disparity));
  std::cout << a.out;
  if (!a.outPng.empty()) {
    writeImage(a.outPng, stereo::disparityToPng(disparity));
    std::cout << ", " << a.outPng;
  }
  size_t valid = 0;
  for (int y = 0; y < disparity.height(); ++y)
    for (int x = 0; x < disparity.width(); ++x)
      valid += disparity.view<uint16_t>().at(x, y) != stereo::kInvalidDisparity;
  std::cout << " (" << disparity.width() << "x" << disparity.height() << ", "
            << 100.0 * valid / (static_cast<double>(disparity.width()) * disparity.height()) << "% valid, " << backend
            << ")\n";
  return 0;
}

}  // namespace

void addStereoCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<StereoArgs>();
  auto* cmd = app.add_subcommand(
      "stereo", "semi-global matching on a stereo pair of pictures: disparity as PFM (and 16-bit PNG)");
  cmd->add_option("LEFT", a->left, "left picture (8-bit grey or RGB; RGB is converted to grey)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("RIGHT", a->right, "right picture, the left's size")->required()->check(CLI::ExistingFile);
  addParamOptions(cmd, stereo::sgmParamSchema(), a->p);
  cmd->add_option("--calib", a->calib,
                  "stereo calibration (OpenCV FileStorage YAML or plain YAML: M1 D1 M2 D2 R T R1 R2 P1 P2 Q): rectify "
                  "the pair first")
      ->check(CLI::ExistingFile);
  addBackendOption(cmd, a->backend);
  cmd->add_option("--out", a->out, "disparity in pixels as PFM (Middlebury: invalid = +inf)")->required();
  cmd->add_option("--out-png", a->outPng, "also a 16-bit PNG: disparity x 16, 0 = invalid");
  cmd->callback([a, &exitCode] { exitCode = stereoFiles(*a); });
}

}  // namespace pp::cli
