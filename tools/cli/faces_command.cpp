// polarpipe faces: faces in a picture, one JSON object per line.
#include <iostream>

#include <nlohmann/json.hpp>

#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "tools/cli/commands.hpp"

namespace pp::cli {

namespace {

struct FacesArgs {
  std::string image, cascade = faces::defaultCascadePath(), backend = "auto";
  faces::DetectParams p;
};

int facesFile(const FacesArgs& a) {
  bool cuda = a.backend == "cuda" || (a.backend == "auto" && gpuAvailable());
  if (cuda && !gpuAvailable()) throw std::invalid_argument("--backend cuda, but " + gpuDescription());
  faces::Cascade cascade = faces::loadCascade(a.cascade);
  Image grey = readGreyImage(a.image);
  Detections found;
  if (cuda) {
    Stream stream;
    Image device(grey.format(), grey.width(), grey.height(), MemoryKind::device);
    copyImage(grey, device, stream.handle());
    found = faces::FaceDetectorCuda(cascade, a.p, grey.width(), grey.height()).detect(device, stream.handle());
  } else {
    found = faces::detectCpu(cascade, grey, a.p);
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
  cmd->add_option("--cascade", a->cascade, "OpenCV Haar cascade XML")->check(CLI::ExistingFile)->capture_default_str();
  cmd->add_option("--scale", a->p.scaleFactor, "pyramid step between window sizes")
      ->check(finiteIn(1.0001, 4.0))
      ->capture_default_str();
  cmd->add_option("--min-neighbors", a->p.minNeighbors, "raw windows a face needs (0: every raw window)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--min-size", a->p.minSize, "smallest face side in pixels (0: the cascade's window)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-size", a->p.maxSize, "largest face side in pixels (0: the image)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "cuda, cpu, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  cmd->callback([a, &exitCode] { exitCode = facesFile(*a); });
}

}  // namespace pp::cli
