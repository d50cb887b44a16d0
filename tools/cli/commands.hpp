// Subcommands of the polarpipe CLI; each adds itself to the app and runs when chosen.
#pragma once
#include <CLI/CLI.hpp>

namespace pp::cli {

// Exit codes: 0 done, 1 a run failed, 2 bad config or arguments.
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

void addRunCommands(CLI::App& app, int& exitCode);       // run, validate, types
void addDemosaicCommands(CLI::App& app, int& exitCode);  // synth, demosaic
void addDofCommand(CLI::App& app, int& exitCode);        // dof
void addCamerasCommand(CLI::App& app, int& exitCode);    // cameras
void addStereoCommand(CLI::App& app, int& exitCode);     // stereo
void addFacesCommand(CLI::App& app, int& exitCode);      // faces

}  // namespace pp::cli
