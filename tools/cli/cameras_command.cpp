// polarpipe cameras: the cameras Aravis finds, like arv-tool-0.8.
#include <iostream>

#include "tools/cli/commands.hpp"

#if POLARPIPE_WITH_ARAVIS
#include "pipeline/aravis/cameras.hpp"
#endif

namespace pp::cli {

void addCamerasCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("cameras",
                                 "list the GigE Vision and USB3 Vision cameras found (id, vendor, model, serial, "
                                 "address, pixel formats, sensor size)");
  static bool brief = false;
  cmd->add_flag("--brief", brief, "do not open the cameras (no pixel formats or sensor size)");
  cmd->callback([&exitCode] {
#if POLARPIPE_WITH_ARAVIS
    auto cameras = aravis::listCameras(!brief);
    if (cameras.empty()) {
      std::cout << "no cameras found (check power, cabling, the subnet, and deploy/tune-network.sh)\n";
      exitCode = kExitFailed;
      return;
    }
    for (const auto& c : cameras) {
      std::cout << c.id << "\n  vendor " << c.vendor << ", model " << c.model << ", serial " << c.serial
                << "\n  address " << c.address << " (" << c.protocol << ", " << c.physicalId << ")\n";
      if (!brief) {
        if (!c.openError.empty()) std::cout << "  cannot open: " << c.openError << "\n";
        if (c.sensorWidth) std::cout << "  sensor " << c.sensorWidth << "x" << c.sensorHeight << "\n";
        if (!c.pixelFormats.empty()) {
          std::cout << "  pixel formats";
          for (const auto& f : c.pixelFormats) std::cout << " " << f;
          std::cout << "\n";
        }
      }
    }
#else
    std::cerr << "this polarpipe was built without Aravis (install libaravis-dev and rebuild)\n";
    exitCode = kExitFailed;
#endif
  });
}

}  // namespace pp::cli
