#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "tools/cli/commands.hpp"

#ifndef POLARPIPE_VERSION
#define POLARPIPE_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("polarpipe");
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);

  CLI::App app{std::string("polarpipe: real-time polarization vision - cameras or files through a graph of stages (") +
               (POLARPIPE_HAS_CUDA ? "CUDA, with CPU references" : "CPU backends; this build has no CUDA") +
               ") to image, video and recording sinks"};
  app.footer(
      "Examples:\n"
      "  polarpipe run config/demo.yaml              the built-in demo (no camera needed)\n"
      "  polarpipe validate config/camera.yaml       check a config without running it\n"
      "  polarpipe types demosaic                    a stage's parameters\n"
      "  polarpipe cameras --brief                   the cameras on the network");
  app.set_version_flag("--version", std::string("polarpipe ") + POLARPIPE_VERSION);
  app.require_subcommand(1);
  int exitCode = 0;
  pp::cli::addRunCommands(app, exitCode);
  pp::cli::addDemosaicCommands(app, exitCode);
  pp::cli::addDofCommand(app, exitCode);
  pp::cli::addCamerasCommand(app, exitCode);
  pp::cli::addStereoCommand(app, exitCode);
  pp::cli::addFacesCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : pp::cli::kExitBadInput;
  } catch (const std::invalid_argument& e) {  // bad input: a file, a value
    spdlog::error("{}", e.what());
    return pp::cli::kExitBadInput;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return pp::cli::kExitFailed;
  }
  return exitCode;
}
