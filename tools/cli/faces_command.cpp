// polarpipe faces: faces in a picture, one JSON object per line.
#include <iostream>

#include <nlohmann/json.hpp>

#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/param_options.hpp"

namespace pp::cli {

namespace {

struct FacesArgs {
  std::string image, backend = "auto";
  std::shared_ptr<faces::FaceDetectParams> p = std::make_shared<faces::FaceDetectParams>();
};

int facesFile(const FacesArgs& a) {
  bool cuda = useCuda(a.backend);
  faces::Cascade cascade = faces::loadCascade(a.p->cascade.value);
  Image grey = readGreyImage(a.image);
  Detections found;
  if (cuda) {
    Stream stream;
    Image device(grey.format(), grey.width(), grey.height(), MemoryKind::device);
    copyImage(grey, device, stream.handle());
    found = faces::FaceDetectorCuda(cascade, *a.p, grey.width(), grey.height()).detect(device, stream.handle());
  } else {
    found = faces::detectCpu(cascade, grey, *a.p);
  }
  auto pixels = [](float v) { return static_cast<int>(v); };  // the detector's boxes are whole pixels
  for (const Box& b : found)
    std::cout << nlohmann::json{{"x", pixels(b.x)},
                                {"y", pixels(b.y)},
                                {"w", pixels(b.w)},
                                {"h", pixels(b.h)},
                                {"neighbors", b.neighbors}}
                     .dump()
              << '\n';
  return 0;
}

}  // namespace

void addFacesCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<FacesArgs>();
  auto* cmd = app.add_subcommand(
      "faces", "faces in a picture with a Haar cascade (as OpenCV's detectMultiScale): one JSON object per face");
  cmd->add_option("IMAGE", a->image, "8-bit grey or colour picture (colour is converted to grey)")
      ->required()
      ->check(CLI::ExistingFile);
  addParamOptions(cmd, faces::faceDetectParamSchema(), a->p, {}, {{"scale_factor", "--scale"}});
  addBackendOption(cmd, a->backend);
  cmd->callback([a, &exitCode] { exitCode = facesFile(*a); });
}

}  // namespace pp::cli
