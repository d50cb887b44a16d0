// polarpipe run | validate | types
#include <spdlog/spdlog.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "pipeline/graph.hpp"
#include "stages/register.hpp"
#include "tools/cli/commands.hpp"

namespace pp::cli {

namespace {

std::atomic<int> signalsReceived{0};

void onSignal(int) {
  // The first signal asks for a clean stop; a second one exits at once.
  if (signalsReceived.fetch_add(1) > 0) _exit(130);
}

struct RunOptions {
  std::string config;
  uint64_t frames = 0;
  std::string backend;
  std::vector<std::string> overrides;
  bool cameras = false;  // validate --camera: open the cameras, read-only
};

void addGraphOptions(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("CONFIG", o.config, "pipeline YAML file")->required()->check(CLI::ExistingFile);
  cmd.add_option("--backend", o.backend,
                 "backend of every stage, overriding the config (auto takes CUDA when a device is present)")
      ->check(CLI::IsMember(backendNames()));
  cmd.add_option("--set", o.overrides,
                 "override a config key, checked like the file: --set stages.NAME.params.KEY=VALUE (repeatable)")
      ->allow_extra_args(false);
}

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    registerAllNodes(reg);
    return reg;
  }();
  return r;
}

// Loads and builds; prints every error and returns nullptr when the config is wrong. Under validate
// (devices other than use) a graph left unchecked without its cameras comes back as nullptr too,
// with `unchecked` set and what was not checked printed.
std::unique_ptr<Graph> load(const RunOptions& o, PipelineSpec& spec, bool logSummaries,
                            PortSetup::Devices devices = PortSetup::Devices::use, bool* unchecked = nullptr) {
  Diagnostics d(o.config);
  spec = loadPipeline(o.config, o.overrides, d);
  // Built even after structural errors, so that type, params and wiring errors come in the same report.
  GraphOptions options{o.backend, o.frames, logSummaries, devices};
  std::unique_ptr<Graph> graph = Graph::build(spec, registry(), d, options);
  if (!d.empty()) {
    std::cerr << d.text();
    std::cerr << d.size() << (d.size() == 1 ? " error" : " errors") << " in " << o.config << "\n";
    for (const auto& note : d.notes()) std::cerr << note << "\n";
    return nullptr;
  }
  if (!graph && unchecked) {
    *unchecked = true;
    for (const auto& note : d.notes()) std::cout << note << "\n";
  }
  return graph;
}

int runPipeline(const RunOptions& o) {
  PipelineSpec spec;
  auto graph = load(o, spec, true);
  if (!graph) return kExitBadInput;
  spdlog::info("{} on {}", o.config, gpuAvailable() ? gpuDescription() : gpuDescription() + ", using the CPU backends");
  for (const auto& line : [&] {
         std::vector<std::string> lines;
         std::string text = graph->describe(), line;
         for (char c : text)
           if (c == '\n')
             lines.push_back(line), line.clear();
           else
             line += c;
         return lines;
       }())
    spdlog::info("  {}", line);

  signalsReceived = 0;
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    while (!finished) {
      if (signalsReceived > 0) {
        spdlog::info("stopping: finishing the frames in flight (signal again to quit at once)");
        graph->stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  int code = 0;
  try {
    graph->run();
  } catch (const PipelineError& e) {
    spdlog::error("{}", e.what());
    code = kExitFailed;
  }
  finished = true;
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::cerr << graph->metrics().table();
  for (const auto& where : graph->destinations()) std::cout << "output " << where << "\n";
  return code;
}

int validate(const RunOptions& o) {
  PipelineSpec spec;
  bool unchecked = false;
  auto graph = load(o, spec, false, o.cameras ? PortSetup::Devices::readOnly : PortSetup::Devices::none, &unchecked);
  if (unchecked) {
    std::cout << o.config << ": OK as far as it could be checked without "
              << (o.cameras ? "changing the cameras" : "the cameras (--camera reads them)") << "\n";
    return 0;
  }
  if (!graph) return kExitBadInput;
  std::cout << o.config << ": OK\n" << graph->describe();
  return 0;
}

// Without names: every type's name and summary, then each with its parameters. With names: those
// types alone; an unknown name is an error that lists the types.
int printTypes(const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (Role role : {Role::source, Role::stage, Role::sink})
    for (const auto& [name, type] : registry().all(role)) known.push_back(name);
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string hint = suggestion(name, known);
      throw std::invalid_argument("no type named '" + name + "'" + (hint.empty() ? "" : "; " + hint) +
                                  " (types: " + joinList(known) + ")");
    }
  auto wanted = [&](const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  };
  if (names.empty()) {
    for (Role role : {Role::source, Role::stage, Role::sink}) {
      std::cout << roleList(role) << ":";
      for (const auto& [name, type] : registry().all(role)) std::cout << " " << name;
      std::cout << "\n";
    }
    std::cout << "(polarpipe types NAME... shows those alone)\n";
#if !POLARPIPE_WITH_ARAVIS
    std::cout << "This build has no camera source (aravis): it was configured without Aravis.\n";
#endif
    std::cout << "\n";
  }
  for (Role role : {Role::source, Role::stage, Role::sink}) {
    bool header = false;
    for (const auto& [name, type] : registry().all(role)) {
      if (!wanted(name)) continue;
      if (!header) std::cout << roleList(role) << ":\n";
      header = true;
      std::cout << "  " << name << " - " << type.summary << "\n" << type.paramHelp();
    }
  }
  return 0;
}

}  // namespace

void addRunCommands(CLI::App& app, int& exitCode) {
  auto runOptions = std::make_shared<RunOptions>();
  auto* run = app.add_subcommand(
      "run", "run a pipeline until its sources end, --frames are done, or SIGINT/SIGTERM (which drains and flushes)");
  addGraphOptions(*run, *runOptions);
  run->add_option("--frames", runOptions->frames, "stop after this many frames have reached the sinks (0: no limit)")
      ->check(countOf());
  run->callback([runOptions, &exitCode] { exitCode = runPipeline(*runOptions); });

  auto validateOptions = std::make_shared<RunOptions>();
  auto* check = app.add_subcommand(
      "validate",
      "check a pipeline file (keys, types, ranges, files, wiring, formats) without running it or changing a camera");
  addGraphOptions(*check, *validateOptions);
  check->add_flag("--camera", validateOptions->cameras,
                  "also open the cameras, read-only: pixel format offered, region within the sensor, features present "
                  "(without it no camera is touched)");
  check->callback([validateOptions, &exitCode] { exitCode = validate(*validateOptions); });

  auto typeNames = std::make_shared<std::vector<std::string>>();
  auto* types = app.add_subcommand(
      "types", "list the source, stage and sink types with their parameters (polarpipe types dof: that one alone)");
  types->add_option("NAME", *typeNames, "types to show (default: all)");
  types->callback([typeNames, &exitCode] { exitCode = printTypes(*typeNames); });
}

}  // namespace pp::cli
