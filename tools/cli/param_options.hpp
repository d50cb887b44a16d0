// A file command's options made from a stage's parameter schema, so that a parameter is declared
// once (its key, help, rule and default) and the command line takes it as the YAML does:
// `min_disparity` becomes `--min-disparity`, a bool `--median` / `--no-median`, a list `--outputs a,b`.
// Values are checked by the schema's own rule; the default shown is the one in `target`.
#pragma once
#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "config/pipeline_spec.hpp"

namespace pp::cli {

inline std::string optionName(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

// Adds an option for each of `keys` (all of the schema's when empty). `target` must outlive the
// parse; `extraNames` gives a key more names ("--scale" beside "--scale-factor").
template <class P> void addParamOptions(CLI::App* cmd, const ParamSchema<P>& schema, std::shared_ptr<P> target,
                                        const std::vector<std::string>& keys = {},
                                        const std::map<std::string, std::string>& extraNames = {}) {
  for (const auto& o : schema.options()) {
    if (!keys.empty() && std::find(keys.begin(), keys.end(), o.key) == keys.end()) continue;
    std::string name = optionName(o.key), extra = extraNames.count(o.key) ? "," + extraNames.at(o.key) : "";
    std::string key = o.key;
    auto set = [&schema, target, key, name](const std::string& text) {
      std::string problem;
      if (!schema.setText(key, text, *target, problem)) throw CLI::ValidationError(name, problem);
    };
    if (o.flag) {
      cmd->add_flag_function(
             name + extra + ",!--no-" + name.substr(2),
             [set](std::int64_t count) { set(count > 0 ? "true" : "false"); }, o.help)
          ->default_str(schema.valueText(key, *target));
      continue;
    }
    std::string shown = schema.valueText(key, *target);
    if (o.list)  // as it is typed: "[90, 45, 135, 0]" -> "90,45,135,0"
      shown.erase(std::remove_if(shown.begin(), shown.end(), [](char c) { return c == '[' || c == ']' || c == ' '; }),
                  shown.end());
    cmd->add_option_function<std::string>(name + extra, set, o.help + " (" + o.allowed + ")")
        ->type_name(o.list ? "A,B,..." : "VALUE")
        ->default_str(shown);
  }
}

// --backend: cpu, cuda or auto, chosen as the graph chooses a stage's (useCuda).
inline void addBackendOption(CLI::App* cmd, std::string& backend) {
  cmd->add_option("--backend", backend, "cuda, cpu, or auto (CUDA when a device is present)")
      ->check(CLI::IsMember(backendNames()))
      ->capture_default_str();
}

}  // namespace pp::cli
