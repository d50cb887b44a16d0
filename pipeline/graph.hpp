// The stage graph: built and checked from a PipelineSpec, then run with `frames_in_flight` frames
// pipelined. Each stage has its own stream; dependencies between stages are events, so frame N+1's
// first stage overlaps frame N's later ones. Sinks run in frame order on their own thread.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/pipeline_spec.hpp"
#include "pipeline/metrics.hpp"
#include "pipeline/registry.hpp"

namespace pp {

struct GraphOptions {
  std::string backend;       // "" keeps the config's; else overrides every stage
  uint64_t maxFrames = 0;    // 0: until the sources end or stop()
  bool logSummaries = true;  // a summary line on stderr every metrics.interval_s
  // validate: check the config only (Devices::none), or also read the cameras (Devices::readOnly);
  // build() then returns nullptr with no error when something was left unchecked, else a graph that
  // describes itself but allocates nothing and cannot run.
  PortSetup::Devices devices = PortSetup::Devices::use;
};

// A stage, source or sink failed while running: names it, the frame and the cause.
struct PipelineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Graph {
 public:
  // Errors (unknown types, params, wiring, cycles, formats) go to `diagnostics`; nullptr then.
  // The graph keeps its own copy of `spec`.
  static std::unique_ptr<Graph> build(const PipelineSpec& spec, const Registry& registry, Diagnostics& diagnostics,
                                      const GraphOptions& options = {});
  ~Graph();

  // Runs until the sources end, maxFrames frames reached the sinks, or stop(); the sinks are
  // finished either way. Throws PipelineError when a node fails.
  void run();
  // Thread-safe and idempotent: sources stop, frames already read finish, sinks flush.
  void stop();

  Metrics& metrics();
  std::string describe() const;                   // one line a node: name, type, backend, ports
  std::vector<std::string> destinations() const;  // where the sinks wrote

  struct Impl;

 private:
  explicit Graph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pp
