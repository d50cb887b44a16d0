// tools/bench: measures the device copy bandwidth, then times every (or the chosen) case.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>

#include "tools/benchmark/bench.hpp"

#if POLARPIPE_HAS_CUDA
#include "cuda/cuda_check.hpp"
#include "tools/benchmark/green_context.hpp"
#endif

namespace pp::bench {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Device-to-device copy of 256 MiB, counting bytes read plus written.
double copyBandwidthGBs() {
#if POLARPIPE_HAS_CUDA
  const size_t bytes = size_t{256} << 20;
  void *a = nullptr, *b = nullptr;
  PP_CUDA_CHECK(cudaMalloc(&a, bytes));
  PP_CUDA_CHECK(cudaMalloc(&b, bytes));
  PP_CUDA_CHECK(cudaMemset(a, 1, bytes));
  Stream stream;
  Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < 13; ++i) {
    start.record(stream.handle());
    PP_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream.handle()));
    stop.record(stream.handle());
    stop.synchronize();
    if (i >= 3) ms.push_back(stop.millisecondsSince(start));
  }
  PP_CUDA_CHECK(cudaFree(a));
  PP_CUDA_CHECK(cudaFree(b));
  return 2.0 * bytes / (median(ms) * 1e-3) / 1e9;
#else
  return 0;
#endif
}

int l2Bytes() {
#if POLARPIPE_HAS_CUDA
  return deviceAttribute(cudaDevAttrL2CacheSize);
#else
  return 0;
#endif
}

struct Result {
  std::string name;
  double ms = 0, msBackToBack = 0, mpixPerS = 0, megabytes = 0, gbPerS = 0, shareOfCopy = 0;
  std::string note;
  std::vector<std::pair<std::string, double>> stageGpuMs;
};

Result measure(const Case& c, Size size, int iterations, double copyGBs) {
  if (c.once) {
    auto run = c.make(size, 1);
    auto t0 = std::chrono::steady_clock::now();
    run->iterate(0, nullptr);
    Result r;
    r.name = c.name;
    r.ms = r.msBackToBack = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.mpixPerS = run->pixels() / (r.ms * 1e-3) / 1e6;
    r.note = run->note();
    r.stageGpuMs = run->stageGpuMs();
    return r;
  }
  // Enough input sets that one pass over them exceeds twice the L2 cache.
  auto probe = c.make(size, 1);
  int sets = c.gpu ? std::clamp(static_cast<int>(2.0 * l2Bytes() / std::max(1.0, probe->bytesMoved())) + 1, 2, 16) : 1;
  probe.reset();
  auto run = c.make(size, sets);
  synchronizeDevice();  // the case's set-up copies (default stream) are done before the timed stream starts
  Result r;
  r.name = c.name;
  Stream stream;
  std::vector<double> ms;
  if (c.gpu) {
    Event start, stop;
    for (int i = 0; i < 5; ++i) run->iterate(i % sets, stream.handle());  // warm-up
    stream.synchronize();
    for (int i = 0; i < iterations; ++i) {
      start.record(stream.handle());
      run->iterate(i % sets, stream.handle());
      stop.record(stream.handle());
      stop.synchronize();
      ms.push_back(stop.millisecondsSince(start));
    }
    // 32 frames back to back: launch gaps hidden, as in a pipelined graph.
    std::vector<double> batches;
    for (int b = 0; b < 5; ++b) {
      start.record(stream.handle());
      for (int i = 0; i < 32; ++i) run->iterate(i % sets, stream.handle());
      stop.record(stream.handle());
      stop.synchronize();
      batches.push_back(stop.millisecondsSince(start) / 32);
    }
    r.msBackToBack = median(batches);
  } else {
    run->iterate(0, nullptr);
    for (int i = 0; i < std::max(3, iterations / 10); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      run->iterate(0, nullptr);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    r.msBackToBack = median(ms);
  }
  r.ms = median(ms);
  r.mpixPerS = run->pixels() / (r.ms * 1e-3) / 1e6;
  r.megabytes = run->bytesMoved() / 1e6;
  r.gbPerS = run->bytesMoved() / (r.msBackToBack * 1e-3) / 1e9;
  r.shareOfCopy = copyGBs > 0 && c.gpu ? r.gbPerS / copyGBs : 0;
  r.note = run->note();
  return r;
}

}  // namespace

}  // namespace pp::bench

namespace pp::bench {
Options& mutableOptions() {
  static Options o;
  return o;
}
const Options& options() { return mutableOptions(); }
}  // namespace pp::bench

int main(int argc, char** argv) {
  using namespace pp::bench;
  CLI::App app{
      "polarpipe benchmarks: each case timed with CUDA events (median of many runs, inputs rotated), with the bytes it "
      "moves against the measured copy bandwidth"};
  bool list = false;
  std::string pattern = ".*", sizeText = "2448x2048", jsonPath;
  int iterations = 50;
  app.add_flag("--list", list, "list the cases and exit");
  app.add_option("--case", pattern, "run the cases whose name matches this regular expression (e.g. 'demosaic/.*')");
  app.add_option("--size", sizeText, "raw frame size WxH")->capture_default_str();
  app.add_option("--iterations", iterations, "timed iterations per case")
      ->check(CLI::Range(5, 100000))
      ->capture_default_str();
  app.add_option("--json", jsonPath, "also write the results to this JSON file");
  Options& o = mutableOptions();
  app.add_option("--frames", o.frames, "graph cases: frames to run (default: the case's)")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--frames-in-flight", o.framesInFlight,
                 "graph cases: frames in flight (default: the case's; 1 gives each stage's GPU time alone)")
      ->check(CLI::Range(1, 16));
  app.add_option("--config", o.config,
                 "graph/config: the pipeline config to run, its aravis sources made synthetic (the Aloe pair) and its "
                 "sinks counters")
      ->check(CLI::ExistingFile);
  int sms = 0;
  app.add_option("--sms", sms,
                 "run the GPU cases on this many of the GPU's SMs (a CUDA green context; the driver may round up) with "
                 "their launches planned for the SMs granted, as on a Jetson (and for the shared memory an SM has "
                 "where POLARPIPE_PLAN_SHARED_KIB says: 164 for AGX Orin, 96 for AGX Xavier); not the graph cases, "
                 "whose stages launch from threads of their own (time those under MPS: tools/jetson-projection)")
      ->check(CLI::Range(1, 1 << 16));
  CLI11_PARSE(app, argc, argv);

  Size size;
  if (std::sscanf(sizeText.c_str(), "%dx%d", &size.width, &size.height) != 2 || size.width <= 0 || size.height <= 0) {
    std::cerr << "--size: expected WxH, got '" << sizeText << "'\n";
    return 2;
  }
  std::vector<Case> cases;
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error& e) {
    std::cerr << "--case: not a regular expression: " << pattern << "\n";
    return 2;
  }
  bool gpu = pp::gpuAvailable();
  for (const auto& c : registry())
    if (std::regex_match(c.name, re)) cases.push_back(c);
  if (list) {
    for (const auto& c : registry()) std::cout << c.name << (c.gpu ? " [gpu] " : " [cpu] ") << c.summary << "\n";
    return 0;
  }
  if (cases.empty()) {
    std::cerr << "no case matches '" << pattern << "' (see --list)\n";
    return 2;
  }
  // Cases that run the graph of --config FILE: without one, an error when nothing else was asked
  // for, else left out (so that the default '.*' runs every other case).
  std::vector<std::string> skipped;
  if (o.config.empty()) {
    for (const auto& c : cases)
      if (c.needsConfig) skipped.push_back(c.name);
    if (skipped.size() == cases.size()) {
      std::cerr << skipped.front() << ": name the config with --config FILE\n";
      return 2;
    }
    cases.erase(std::remove_if(cases.begin(), cases.end(), [](const Case& c) { return c.needsConfig; }), cases.end());
  }
  if (sms > 0) {
    if (!gpu) {
      std::cerr << "--sms: " << pp::gpuDescription() << "\n";
      return 2;
    }
    for (const auto& c : cases)
      if (c.once) {
        std::cerr << "--sms: " << c.name
                  << " launches from threads of its own, which the green context does not reach\n";
        return 2;
      }
  }
  std::cout << "device: " << pp::gpuDescription() << "\n";
  if (!gpu) std::cout << "no GPU: running the CPU cases only\n";
#if POLARPIPE_HAS_CUDA
  if (sms > 0) {
    try {
      sms = runOnMultiprocessors(sms);
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
    setenv("POLARPIPE_PLAN_SMS", std::to_string(sms).c_str(), 1);  // read by the launchers' plans (cuda/device.hpp)
    std::cout << "on " << sms << " SMs (a green context)\n";
  }
#endif
  double copy = gpu ? copyBandwidthGBs() : 0;
  if (gpu) std::printf("device copy bandwidth: %.0f GB/s (256 MiB device to device, read + write)\n", copy);
  for (const auto& name : skipped) std::cout << name << ": left out (no --config FILE)\n";
  std::printf("%-36s %10s %12s %10s %10s %9s %7s\n", "case", "ms", "ms (x32)", "Mpix/s", "MB moved", "GB/s", "% copy");
  nlohmann::json json = {{"device", pp::gpuDescription()},
                         {"copy_gb_per_s", copy},
                         {"size", sizeText},
                         {"cases", nlohmann::json::array()}};
#if POLARPIPE_HAS_CUDA
  // As this process sees them: MPS may limit them, or --sms.
  if (gpu) json["multiprocessors"] = sms > 0 ? sms : pp::deviceAttribute(cudaDevAttrMultiProcessorCount);
#endif
  int status = 0;
  for (const auto& c : cases) {
    if (c.gpu && !gpu) continue;
    Result r;
    try {
      r = measure(c, size, iterations, copy);
    } catch (const std::exception& e) {
      std::cerr << c.name << ": " << e.what() << "\n";
      status = 1;
      continue;
    }
    std::printf("%-36s %10.4f %12.4f %10.0f %10.2f %9.0f %6.0f%%  %s\n", r.name.c_str(), r.ms, r.msBackToBack,
                r.mpixPerS, r.megabytes, r.gbPerS, 100 * r.shareOfCopy, r.note.c_str());
    json["cases"].push_back({{"name", r.name},
                             {"ms", r.ms},
                             {"ms_back_to_back", r.msBackToBack},
                             {"mpix_per_s", r.mpixPerS},
                             {"megabytes", r.megabytes},
                             {"gb_per_s", r.gbPerS},
                             {"share_of_copy", r.shareOfCopy},
                             {"note", r.note}});
    if (!r.stageGpuMs.empty()) {
      nlohmann::json stages = nlohmann::json::array();
      for (const auto& [name, ms] : r.stageGpuMs) stages.push_back({{"stage", name}, {"gpu_ms", ms}});
      json["cases"].back()["stage_gpu_ms"] = stages;
    }
  }
  if (!jsonPath.empty()) std::ofstream(jsonPath) << json.dump(2) << "\n";
  return status;
}
