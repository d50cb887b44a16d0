// Pipeline metrics: per-stage CPU and GPU time, end-to-end latency, fps, drops, incomplete frames,
// pool use. A summary line every interval, a table at exit, Prometheus text on demand.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/node.hpp"

namespace pp {

// Count, mean and percentiles over the most recent samples.
class Distribution {
 public:
  void add(double value);
  uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double percentile(double p) const;  // p in [0, 100], over the last kWindow samples

 private:
  static constexpr size_t kWindow = 4096;
  std::vector<double> recent_;
  size_t next_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  struct StageInfo {
    std::string name;
    Backend backend;
  };
  Metrics(std::vector<StageInfo> stages, std::vector<std::string> sources, int slots);

  void recordStage(size_t stage, double cpuMs, double gpuMs);
  void recordFrame(double latencyMs);
  void recordDrop(size_t source, uint64_t count = 1);
  void recordIncomplete(size_t source);
  void recordUnpaired(size_t source);  // a frame dropped because no frame of the other sources matched it
  void setSlotsInUse(int inUse);
  // A node's own counters (Source::counters, Sink::counters), listed under the node's name.
  void addCounters(const std::string& node, std::vector<Counter> counters);

  uint64_t framesDone() const;
  uint64_t drops() const;
  // Frames, fps, latency, drops, slots since the previous call, and every node's counters.
  MetricsReport report();
  // "frames 240 | fps 23.9 | latency p50 12.1 ms p99 15.0 ms | drops 0 | slots 2/3".
  static std::string summaryLine(const MetricsReport& r);
  std::string table() const;
  // Each CUDA stage's mean GPU time so far, ms, by name.
  std::vector<std::pair<std::string, double>> stageGpuMs() const;
  std::string prometheus() const;

 private:
  mutable std::mutex mutex_;
  std::vector<StageInfo> stages_;
  std::vector<Distribution> cpuMs_, gpuMs_;
  std::vector<std::string> sources_;
  std::vector<uint64_t> drops_, incomplete_, unpaired_;
  std::vector<std::pair<std::string, Counter>> counters_;  // node, counter
  Distribution latencyMs_;
  int slots_, slotsInUse_ = 0, slotsPeak_ = 0;
  Clock::time_point started_ = Clock::now(), lastSummary_ = started_;
  uint64_t framesAtLastSummary_ = 0;
};

// Serves GET /metrics in the Prometheus text format on a background thread.
class MetricsServer {
 public:
  MetricsServer(const Metrics& metrics, const std::string& address, int port);  // port 0: any free port
  ~MetricsServer();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace pp
