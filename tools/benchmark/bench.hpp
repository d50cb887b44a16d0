// The benchmark driver's contract. A case sets up its inputs for a frame size, then enqueues one
// iteration at a time; the driver times iterations with CUDA events (host clock for CPU cases),
// takes the median, and relates the bytes the case must move to the measured copy bandwidth.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/gpu.hpp"

namespace pp::bench {

struct Size {
  int width = 2448, height = 2048;
};

class Run {
 public:
  virtual ~Run() = default;
  // One iteration; `index` picks the input set (rotated so caches do not flatter).
  virtual void iterate(int index, StreamHandle stream) = 0;
  virtual double bytesMoved() const = 0;  // the fewest bytes one iteration must read and write
  virtual double pixels() const = 0;      // pixels one iteration produces or consumes, for Mpix/s
  virtual std::string note() const { return ""; }
  // A graph's per-stage mean GPU time, ms (tools/bench's JSON "stage_gpu_ms").
  virtual std::vector<std::pair<std::string, double>> stageGpuMs() const { return {}; }
};

// Driver settings that cases read: graph cases run `frames` frames (0: their own count) with
// `framesInFlight` in flight (0: their own), and graph/config runs the config at `config`.
struct Options {
  int frames = 0, framesInFlight = 0;
  std::string config;
};
const Options& options();

struct Case {
  std::string name;  // "demosaic/rggb8-angles"
  std::string summary;
  bool gpu = true;  // false: a CPU case, timed on the host
  std::function<std::unique_ptr<Run>(Size size, int inputSets)> make;
  bool once = false;         // a GPU case that runs its own streams (the whole graph): one iteration, timed on the host
  bool needsConfig = false;  // runs the graph of --config FILE: left out without one, unless asked for alone
};

std::vector<Case>& registry();
struct Register {
  explicit Register(Case c) { registry().push_back(std::move(c)); }
};

}  // namespace pp::bench
