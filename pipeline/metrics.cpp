#include "pipeline/metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <thread>

#if POLARPIPE_WITH_HTTP
#include <httplib.h>
#endif

namespace pp {

void Distribution::add(double value) {
  if (recent_.size() < kWindow) {
    recent_.push_back(value);
  } else {
    recent_[next_] = value;
    next_ = (next_ + 1) % kWindow;
  }
  ++count_;
  sum_ += value;
}

double Distribution::percentile(double p) const {
  if (recent_.empty()) return 0;
  std::vector<double> sorted = recent_;
  size_t k = std::min(sorted.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5));
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(k), sorted.end());
  return sorted[k];
}

Metrics::Metrics(std::vector<StageInfo> stages, std::vector<std::string> sources, int slots)
    : stages_(std::move(stages)),
      cpuMs_(stages_.size()),
      gpuMs_(stages_.size()),
      sources_(std::move(sources)),
      drops_(sources_.size()),
      incomplete_(sources_.size()),
      unpaired_(sources_.size()),
      slots_(slots) {}

void Metrics::recordStage(size_t stage, double cpuMs, double gpuMs) {
  std::lock_guard lock(mutex_);
  cpuMs_[stage].add(cpuMs);
  if (stages_[stage].backend == Backend::cuda) gpuMs_[stage].add(gpuMs);
}

void Metrics::recordFrame(double latencyMs) {
  std::lock_guard lock(mutex_);
  latencyMs_.add(latencyMs);
}

void Metrics::recordDrop(size_t source, uint64_t count) {
  std::lock_guard lock(mutex_);
  drops_[source] += count;
}

void Metrics::recordIncomplete(size_t source) {
  std::lock_guard lock(mutex_);
  ++incomplete_[source];
}

void Metrics::recordUnpaired(size_t source) {
  std::lock_guard lock(mutex_);
  ++unpaired_[source];
}

void Metrics::setSlotsInUse(int inUse) {
  std::lock_guard lock(mutex_);
  slotsInUse_ = inUse;
  slotsPeak_ = std::max(slotsPeak_, inUse);
}

void Metrics::addCounters(const std::string& node, std::vector<Counter> counters) {
  std::lock_guard lock(mutex_);
  for (auto& c : counters) counters_.emplace_back(node, std::move(c));
}

uint64_t Metrics::framesDone() const {
  std::lock_guard lock(mutex_);
  return latencyMs_.count();
}

uint64_t Metrics::drops() const {
  std::lock_guard lock(mutex_);
  return std::accumulate(drops_.begin(), drops_.end(), uint64_t{0});
}

MetricsReport Metrics::report() {
  std::lock_guard lock(mutex_);
  auto now = Clock::now();
  double seconds = std::chrono::duration<double>(now - lastSummary_).count();
  uint64_t frames = latencyMs_.count() - framesAtLastSummary_;
  lastSummary_ = now;
  framesAtLastSummary_ = latencyMs_.count();
  MetricsReport r;
  r.frames = latencyMs_.count();
  r.drops = std::accumulate(drops_.begin(), drops_.end(), uint64_t{0});
  r.fps = seconds > 0 ? static_cast<double>(frames) / seconds : 0.0;
  r.latencyP50Ms = latencyMs_.percentile(50);
  r.latencyP99Ms = latencyMs_.percentile(99);
  r.slotsInUse = slotsInUse_;
  r.slots = slots_;
  for (const auto& [node, counter] : counters_) r.counters.emplace_back(node, &counter);
  return r;
}

std::string Metrics::summaryLine(const MetricsReport& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "frames %llu | fps %.1f | latency p50 %.1f ms p99 %.1f ms | drops %llu | slots %d/%d",
                static_cast<unsigned long long>(r.frames), r.fps, r.latencyP50Ms, r.latencyP99Ms,
                static_cast<unsigned long long>(r.drops), r.slotsInUse, r.slots);
  return line;
}

std::vector<std::pair<std::string, double>> Metrics::stageGpuMs() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, double>> ms;
  for (size_t i = 0; i < stages_.size(); ++i)
    if (gpuMs_[i].count() > 0) ms.emplace_back(stages_[i].name, gpuMs_[i].mean());
  return ms;
}

std::string Metrics::table() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  char line[256];
  double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  std::snprintf(line, sizeof line, "%-20s %-7s %8s %10s %10s %10s %10s\n", "stage", "backend", "frames", "cpu ms",
                "cpu p99", "gpu ms", "gpu p99");
  out << line;
  for (size_t i = 0; i < stages_.size(); ++i) {
    bool gpu = stages_[i].backend == Backend::cuda;
    char gpuMean[32] = "-", gpuP99[32] = "-";
    if (gpu) {
      std::snprintf(gpuMean, sizeof gpuMean, "%.3f", gpuMs_[i].mean());
      std::snprintf(gpuP99, sizeof gpuP99, "%.3f", gpuMs_[i].percentile(99));
    }
    std::snprintf(line, sizeof line, "%-20s %-7s %8llu %10.3f %10.3f %10s %10s\n", stages_[i].name.c_str(),
                  backendName(stages_[i].backend), static_cast<unsigned long long>(cpuMs_[i].count()), cpuMs_[i].mean(),
                  cpuMs_[i].percentile(99), gpuMean, gpuP99);
    out << line;
  }
  for (size_t i = 0; i < sources_.size(); ++i) {
    std::snprintf(line, sizeof line, "source %-13s dropped %llu, incomplete %llu, unpaired %llu\n", sources_[i].c_str(),
                  static_cast<unsigned long long>(drops_[i]), static_cast<unsigned long long>(incomplete_[i]),
                  static_cast<unsigned long long>(unpaired_[i]));
    out << line;
  }
  for (size_t i = 0; i < counters_.size(); ++i) {
    const auto& [node, counter] = counters_[i];
    if (i == 0 || counters_[i - 1].first != node) out << (i ? "\n" : "") << node << ":";
    out << " " << counter.name << " " << counter.value->load();
    if (i + 1 == counters_.size()) out << "\n";
  }
  std::snprintf(line, sizeof line,
                "frames %llu in %.2f s (%.1f fps), latency mean %.2f ms p50 %.2f ms p99 %.2f ms, slots peak %d/%d\n",
                static_cast<unsigned long long>(latencyMs_.count()), seconds,
                seconds > 0 ? latencyMs_.count() / seconds : 0.0, latencyMs_.mean(), latencyMs_.percentile(50),
                latencyMs_.percentile(99), slotsPeak_, slots_);
  out << line;
  return out.str();
}

std::string Metrics::prometheus() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP polarpipe_frames_total Frames that reached the sinks.\n# TYPE polarpipe_frames_total counter\n"
      << "polarpipe_frames_total " << latencyMs_.count() << "\n";
  out << "# HELP polarpipe_latency_ms End-to-end latency from frame arrival to the sinks.\n# TYPE polarpipe_latency_ms "
         "summary\n";
  for (double q : {0.5, 0.99})
    out << "polarpipe_latency_ms{quantile=\"" << q << "\"} " << latencyMs_.percentile(q * 100) << "\n";
  out << "polarpipe_latency_ms_sum " << latencyMs_.mean() * static_cast<double>(latencyMs_.count()) << "\n"
      << "polarpipe_latency_ms_count " << latencyMs_.count() << "\n";
  out << "# HELP polarpipe_stage_cpu_ms_sum CPU time spent in each stage's process().\n# TYPE "
         "polarpipe_stage_cpu_ms_sum counter\n";
  for (size_t i = 0; i < stages_.size(); ++i)
    out << "polarpipe_stage_cpu_ms_sum{stage=\"" << stages_[i].name << "\"} "
        << cpuMs_[i].mean() * static_cast<double>(cpuMs_[i].count()) << "\n";
  out << "# HELP polarpipe_stage_gpu_ms_sum GPU time of each CUDA stage, from CUDA events.\n# TYPE "
         "polarpipe_stage_gpu_ms_sum counter\n";
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].backend == Backend::cuda)
      out << "polarpipe_stage_gpu_ms_sum{stage=\"" << stages_[i].name << "\"} "
          << gpuMs_[i].mean() * static_cast<double>(gpuMs_[i].count()) << "\n";
  out << "# HELP polarpipe_stage_frames_total Frames each stage processed.\n# TYPE polarpipe_stage_frames_total "
         "counter\n";
  for (size_t i = 0; i < stages_.size(); ++i)
    out << "polarpipe_stage_frames_total{stage=\"" << stages_[i].name << "\"} " << cpuMs_[i].count() << "\n";
  out << "# HELP polarpipe_source_dropped_total Frames a live source dropped because the graph was behind.\n# TYPE "
         "polarpipe_source_dropped_total counter\n";
  for (size_t i = 0; i < sources_.size(); ++i)
    out << "polarpipe_source_dropped_total{source=\"" << sources_[i] << "\"} " << drops_[i] << "\n";
  out << "# HELP polarpipe_source_incomplete_total Incomplete frames received.\n# TYPE "
         "polarpipe_source_incomplete_total counter\n";
  for (size_t i = 0; i < sources_.size(); ++i)
    out << "polarpipe_source_incomplete_total{source=\"" << sources_[i] << "\"} " << incomplete_[i] << "\n";
  // One family per counter name, labelled by node.
  std::vector<std::string> names;
  for (const auto& [node, counter] : counters_)
    if (std::find(names.begin(), names.end(), counter.name) == names.end()) names.push_back(counter.name);
  for (const auto& name : names) {
    bool first = true;
    for (const auto& [node, counter] : counters_) {
      if (counter.name != name) continue;
      std::string family = "polarpipe_" + name + (counter.gauge ? "" : "_total");
      if (first)
        out << "# HELP " << family << " " << counter.help << "\n# TYPE " << family
            << (counter.gauge ? " gauge\n" : " counter\n");
      first = false;
      out << family << "{node=\"" << node << "\"} " << counter.value->load() << "\n";
    }
  }
  out << "# HELP polarpipe_source_unpaired_total Frames dropped because no frame of the other sources was within "
         "pair_tolerance_ms.\n# TYPE polarpipe_source_unpaired_total counter\n";
  for (size_t i = 0; i < sources_.size(); ++i)
    out << "polarpipe_source_unpaired_total{source=\"" << sources_[i] << "\"} " << unpaired_[i] << "\n";
  out << "# HELP polarpipe_slots_in_use Frame slots in flight.\n# TYPE polarpipe_slots_in_use "
         "gauge\npolarpipe_slots_in_use "
      << slotsInUse_ << "\n";
  out << "# HELP polarpipe_slots Frame slots (frames_in_flight).\n# TYPE polarpipe_slots gauge\npolarpipe_slots "
      << slots_ << "\n";
  return out.str();
}

#if POLARPIPE_WITH_HTTP
struct MetricsServer::Impl {
  httplib::Server server;
  std::thread thread;
};

MetricsServer::MetricsServer(const Metrics& metrics, const std::string& address, int port)
    : impl_(std::make_unique<Impl>()) {
  // httplib's default adds SO_REUSEPORT, which lets a second process share the port silently.
  impl_->server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // An idle connection holds a worker for at most a second, and there are many workers: a scrape
  // waits at most about (idle connections / kWorkers) s behind connections that send nothing.
  constexpr size_t kWorkers = 32;
  impl_->server.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  impl_->server.set_keep_alive_timeout(1);
  impl_->server.set_read_timeout(1, 0);
  impl_->server.set_write_timeout(2, 0);
  impl_->server.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.prometheus(), "text/plain; version=0.0.4");
  });
  port_ = port == 0 ? impl_->server.bind_to_any_port(address) : (impl_->server.bind_to_port(address, port) ? port : -1);
  if (port_ < 0)
    throw std::runtime_error("metrics: cannot listen on " + address + ":" + std::to_string(port) +
                             " (in use, or not an address of this machine)");
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  // stop() before the loop runs would be lost and the destructor would wait forever.
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MetricsServer::~MetricsServer() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}
#else
struct MetricsServer::Impl {};
MetricsServer::MetricsServer(const Metrics&, const std::string&, int) {
  throw std::runtime_error("metrics.port is set, but this build has no HTTP server (cpp-httplib was not found)");
}
MetricsServer::~MetricsServer() = default;
#endif

}  // namespace pp
