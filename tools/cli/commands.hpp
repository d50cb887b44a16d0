// Subcommands of the polarpipe CLI; each adds itself to the app and runs when chosen.
#pragma once
#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace pp::cli {

// Exit codes: 0 done, 1 a run failed, 2 bad config or arguments.
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

// A finite number in [lo, hi]. CLI11's Range and NonNegativeNumber let "nan" through (every
// comparison with NaN is false) and "inf" through an open end.
inline CLI::Validator finiteIn(double lo, double hi) {
  std::string range = "[" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < lo || v > hi)
          return "'" + text + "' is not a finite number in " + range;
        return "";
      },
      "NUMBER in " + range);
}

// A whole number >= 0 written as digits alone (CLI11 turns "-1" into 2^64 - 1 for unsigned options).
inline CLI::Validator countOf() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return "'" + text + "' is not a whole number >= 0";
        return "";
      },
      "COUNT");
}

void addRunCommands(CLI::App& app, int& exitCode);       // run, validate, types
void addDemosaicCommands(CLI::App& app, int& exitCode);  // synth, demosaic
void addDofCommand(CLI::App& app, int& exitCode);        // dof
void addCamerasCommand(CLI::App& app, int& exitCode);    // cameras
void addStereoCommand(CLI::App& app, int& exitCode);     // stereo
void addFacesCommand(CLI::App& app, int& exitCode);      // faces

}  // namespace pp::cli
