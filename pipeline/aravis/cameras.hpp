// Finding GigE Vision and USB3 Vision cameras through Aravis (`polarpipe cameras`, source `aravis`).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::aravis {

struct CameraInfo {
  std::string id, vendor, model, serial, address, physicalId, protocol;
  std::vector<std::string> pixelFormats;  // empty when the camera could not be opened
  int sensorWidth = 0, sensorHeight = 0;
  std::string openError;  // why it could not be opened (busy, unreachable)
};

// Every camera Aravis finds; `details` opens each to read its pixel formats and sensor size.
std::vector<CameraInfo> listCameras(bool details);

// No camera answers to what was asked for (yet: a PoE camera boots after the Jetson).
struct CameraNotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The Aravis device id of the camera whose id, serial number, IP address or MAC is `wanted` (the
// first camera when empty). An IP address that discovery did not answer is returned as is, so that
// Aravis tries it directly. Throws CameraNotFound naming what was found when nothing matches.
std::string resolveCamera(const std::string& wanted);

}  // namespace pp::aravis
