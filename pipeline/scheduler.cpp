// The scheduler: a thread per source reading into its buffer sets; the scheduling thread admits a
// frame into a free slot (one frame from every source, paired) and enqueues the stages that only
// enqueue; a second thread runs the stages that wait for the device, in order; a third hands each
// finished frame to the sinks in order and frees its slot.
#include <spdlog/spdlog.h>

#include <thread>

#include "pipeline/graph_impl.hpp"
#include "pipeline/transfer.hpp"

namespace pp {

using detail::Binding;
using detail::BufferSet;
using detail::kNone;
using detail::NodeRuntime;
using detail::Slot;
using detail::SourcePool;

namespace {

// The frame a source fills: in the set the graph gave it, or in the one it names (own buffers).
class SourceFrameImpl : public SourceFrame {
 public:
  SourceFrameImpl(SourcePool& pool, size_t set, bool ownBuffers, FrameMeta& meta)
      : pool_(pool), set_(set), own_(ownBuffers), meta_(meta) {}
  Image& out(const std::string& port) override {
    if (set_ == kNone)
      throw std::logic_error("a source that fills its own buffers wrote output '" + port + "' before useSet()");
    return pool_.sets.at(set_).images.at(port);
  }
  FrameMeta& meta() override { return meta_; }
  void useSet(size_t set) override {
    if (!own_) throw std::logic_error("useSet() is for sources that fill their own buffers");
    if (set >= pool_.sets.size()) throw std::logic_error("useSet(" + std::to_string(set) + ") names no buffer set");
    set_ = set;
  }
  size_t set() const { return set_; }

 private:
  SourcePool& pool_;
  size_t set_;
  bool own_;
  FrameMeta& meta_;
};

class StageContext : public ProcessContext {
 public:
  StageContext(Graph::Impl& g, Slot& slot, size_t node) : g_(g), slot_(slot), node_(node), n_(g.nodes[node]) {}
  StreamHandle stream() const override { return n_.stream->handle(); }
  const FrameMeta& meta() const override { return slot_.meta; }
  const Image& in(const std::string& port) const override { return g_.inputImage(slot_, node_, binding(port)); }
  Image& out(const std::string& port) override {
    auto it = slot_.images[node_].find(port);
    if (it == slot_.images[node_].end())
      throw std::logic_error("stage '" + n_.spec->name + "' wrote output '" + port + "' it did not declare");
    return it->second;
  }
  const Detections& detectionsIn(const std::string& port) const override {
    const Binding& b = binding(port);
    return slot_.detections[b.producer].at(b.producerPort);
  }
  Detections& detectionsOut(const std::string& port) override { return slot_.detections[node_].at(port); }
  bool connected(const std::string& port) const override { return n_.binding(port) != nullptr; }

 private:
  const Binding& binding(const std::string& port) const {
    const Binding* b = n_.binding(port);
    if (!b) throw std::logic_error("stage '" + n_.spec->name + "' read input '" + port + "' that is not connected");
    return *b;
  }
  Graph::Impl& g_;
  Slot& slot_;
  size_t node_;
  NodeRuntime& n_;
};

class SinkFrameImpl : public SinkFrame {
 public:
  SinkFrameImpl(Graph::Impl& g, Slot& slot, size_t node) : g_(g), slot_(slot), node_(node) {}
  const FrameMeta& meta() const override { return slot_.meta; }
  const Image& in(const std::string& port) const override { return g_.inputImage(slot_, node_, binding(port)); }
  const Detections& detectionsIn(const std::string& port) const override {
    const Binding& b = binding(port);
    return slot_.detections[b.producer].at(b.producerPort);
  }

 private:
  const Binding& binding(const std::string& port) const {
    const Binding* b = g_.nodes[node_].binding(port);
    if (!b) throw std::logic_error("sink read input '" + port + "' that is not connected");
    return *b;
  }
  Graph::Impl& g_;
  Slot& slot_;
  size_t node_;
};

double millisecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void Graph::Impl::sourceLoop(size_t node) {
  NodeRuntime& n = nodes[node];
  SourcePool& pool = pools[node];
  FrameQueue<size_t>& queue = *queues[node];
  bool live = n.source->live();
  uint64_t sequence = 0, droppedSinceLast = 0;
  auto isStopping = [this] { return stopping.load(); };
  try {
    bool own = n.source->fillsOwnBuffers();
    while (!stopping) {
      size_t set = own ? kNone : pool.acquire(stopping);
      if (!own && set == kNone) break;
      FrameMeta meta;
      meta.source = n.spec->name;
      meta.sequence = sequence++;
      SourceFrameImpl frame(pool, set, own, meta);
      bool got = n.source->read(frame, isStopping);
      set = frame.set();
      if (!got) {
        if (set != kNone) pool.release(set);
        break;
      }
      if (set == kNone) throw std::logic_error("the source returned a frame without naming its buffer set");
      BufferSet& buffers = pool.sets[set];
      buffers.meta = std::move(meta);
      if (buffers.meta.received == Clock::time_point{}) buffers.meta.received = Clock::now();
      if (buffers.meta.incomplete) metrics->recordIncomplete(n.metricsIndex);
      buffers.meta.droppedBefore = droppedSinceLast;
      droppedSinceLast = 0;
      if (live) {
        if (auto dropped = queue.pushDropOldest(set)) {
          pool.release(*dropped);
          metrics->recordDrop(n.metricsIndex);
          ++droppedSinceLast;
        }
      } else if (!queue.push(set)) {
        pool.release(set);
        break;
      }
    }
  } catch (const std::exception& e) {
    fail("source '" + n.spec->name + "' failed on frame " + std::to_string(sequence - 1) + ": " + e.what());
  }
  queue.close();
}

void Graph::Impl::splitStages() {
  std::vector<bool> waits(nodes.size(), false);
  for (size_t i : stageOrder) {
    const NodeRuntime& n = nodes[i];
    waits[i] = n.backend == Backend::cpu || n.stage->waitsForDevice();
    for (const auto& b : n.inputs) waits[i] = waits[i] || waits[b.producer];
    (waits[i] ? waitingOrder : enqueueOrder).push_back(i);
  }
}

void Graph::Impl::runStage(Slot& slot, size_t i) {
  NodeRuntime& n = nodes[i];
  StreamHandle stream = n.stream->handle();
  for (const auto& b : n.inputs) {
    if (nodes[b.producer].stage) slot.done[b.producer]->waitOn(stream);
    if (b.staged) copyImage(produced(slot, b), slot.staged[i].at(b.port), stream);
  }
  if (n.backend == Backend::cpu) n.stream->synchronize();  // the host reads the inputs next
  slot.start[i]->record(stream);
  auto t0 = Clock::now();
  StageContext ctx(*this, slot, i);
  ProfilerRange range(n.spec->name.c_str());
  n.stage->process(ctx);
  slot.cpuMs[i] = millisecondsBetween(t0, Clock::now());
  slot.done[i]->record(stream);
}

// Several sources and a pair tolerance: while the frames taken are further apart than the
// tolerance, the oldest is dropped (counted as unpaired) and its source's next frame taken.
// False when a source ended meanwhile.
bool Graph::Impl::pairFrames(Slot& slot) {
  const PipelineSettings& p = spec.pipeline;
  if (sources.size() < 2 || p.pairToleranceMs <= 0) return true;
  auto time = [&](size_t s) {
    const FrameMeta& m = pools[s].sets[slot.sourceSets[s]].meta;
    return p.pairBy == "camera_timestamp"
               ? static_cast<double>(m.cameraTimestampNs) * 1e-6
               : std::chrono::duration<double, std::milli>(m.received.time_since_epoch()).count();
  };
  for (int unpaired = 1;; ++unpaired) {
    size_t oldest = sources.front(), newest = sources.front();
    for (size_t s : sources) {
      if (time(s) < time(oldest)) oldest = s;
      if (time(s) > time(newest)) newest = s;
    }
    if (time(newest) - time(oldest) <= p.pairToleranceMs) return true;
    pools[oldest].release(std::exchange(slot.sourceSets[oldest], kNone));
    metrics->recordUnpaired(nodes[oldest].metricsIndex);
    if (unpaired == 100)
      spdlog::warn(
          "100 frames in a row without a pair within pair_tolerance_ms ({} ms): are the cameras triggered together, at "
          "the same rate?",
          p.pairToleranceMs);
    auto next = queues[oldest]->pop();
    if (!next) return false;
    slot.sourceSets[oldest] = *next;
  }
}

void Graph::Impl::schedule() {
  FrameQueue<size_t> finished(slots.size()), enqueued(slots.size());
  std::thread completion([&] { complete(finished); });
  std::thread waiting([&] { runWaitingStages(enqueued, finished); });
  uint64_t admitted = 0;
  while ((options.maxFrames == 0 || admitted < options.maxFrames) && !waitingFailed) {
    size_t k;
    {
      std::unique_lock lock(slotMutex);
      slotFreed.wait(lock, [&] { return !freeSlots.empty(); });
      k = freeSlots.front();
      freeSlots.pop_front();
      metrics->setSlotsInUse(static_cast<int>(slots.size() - freeSlots.size()));
    }
    Slot& slot = slots[k];
    // One frame from every source (file sources in lockstep).
    bool ended = false;
    for (size_t s : sources) {
      auto set = queues[s]->pop();
      if (!set) {
        ended = true;
        break;
      }
      slot.sourceSets[s] = *set;
    }
    if (!ended) ended = !pairFrames(slot);
    if (ended) {
      releaseSlot(k);
      break;
    }
    slot.meta = pools[sources.front()].sets[slot.sourceSets[sources.front()]].meta;
    slot.index = admitted;
    size_t current = kNone;
    try {
      for (size_t i : enqueueOrder) {
        current = i;
        runStage(slot, i);
      }
    } catch (const std::exception& e) {
      fail("stage '" + nodes[current].spec->name + "' failed on frame " + std::to_string(admitted) + ": " + e.what());
      releaseAfterFailure(k);
      break;
    }
    enqueued.push(k);
    ++admitted;
  }
  requestStop();
  enqueued.close();
  waiting.join();
  finished.close();
  completion.join();
}

// The second scheduling thread: the stages that wait for the device, then the copies the sinks
// read, frame by frame in order. After a failure the frames still coming are only released.
void Graph::Impl::runWaitingStages(FrameQueue<size_t>& enqueued, FrameQueue<size_t>& finished) {
  bool broken = false;
  while (auto k = enqueued.pop()) {
    Slot& slot = slots[*k];
    if (broken) {
      releaseAfterFailure(*k);
      continue;
    }
    size_t current = kNone;
    try {
      for (size_t i : waitingOrder) {
        current = i;
        runStage(slot, i);
      }
      current = kNone;
      // Device results the sinks read come back on the sink stream.
      StreamHandle sinkStreamHandle = sinkStream->handle();
      for (size_t i : sinks)
        for (const auto& b : nodes[i].inputs) {
          if (nodes[b.producer].stage) slot.done[b.producer]->waitOn(sinkStreamHandle);
          if (b.staged) copyImage(produced(slot, b), slot.staged[i].at(b.port), sinkStreamHandle);
        }
      slot.sinkReady.record(sinkStreamHandle);
    } catch (const std::exception& e) {
      std::string who =
          current == kNone ? "copying results for the sinks" : "stage '" + nodes[current].spec->name + "'";
      fail(who + " failed on frame " + std::to_string(slot.index) + ": " + e.what());
      releaseAfterFailure(*k);
      broken = true, waitingFailed = true;
      continue;
    }
    finished.push(*k);
  }
}

// A frame that will not reach the sinks: the work already enqueued finishes before its buffers go.
void Graph::Impl::releaseAfterFailure(size_t k) {
  for (auto& n : nodes) {
    try {
      n.stream->synchronize();
    } catch (const std::exception&) {  // the device failed: already reported
    }
  }
  releaseSlot(k);
}

// The slot's source buffers go back to their pools and the slot to the free list.
void Graph::Impl::releaseSlot(size_t k) {
  Slot& slot = slots[k];
  for (size_t s : sources)
    if (slot.sourceSets[s] != kNone) pools[s].release(std::exchange(slot.sourceSets[s], kNone));
  std::lock_guard lock(slotMutex);
  freeSlots.push_back(k);
  metrics->setSlotsInUse(static_cast<int>(slots.size() - freeSlots.size()));
  slotFreed.notify_one();
}

// Every frame that made it through the stages reaches the sinks, even after a later frame or a
// source failed; after a sink or the GPU fails, the rest are only released.
void Graph::Impl::complete(FrameQueue<size_t>& finished) {
  bool broken = false;
  while (auto k = finished.pop()) {
    Slot& slot = slots[*k];
    try {
      if (!broken) {
        slot.sinkReady.synchronize();
        for (size_t i : stageOrder) {
          slot.done[i]->synchronize();
          metrics->recordStage(nodes[i].metricsIndex, slot.cpuMs[i], slot.done[i]->millisecondsSince(*slot.start[i]));
        }
        for (size_t i : sinks) {
          SinkFrameImpl frame(*this, slot, i);
          nodes[i].sink->consume(frame);
        }
        metrics->recordFrame(millisecondsBetween(slot.meta.received, Clock::now()));
      }
    } catch (const std::exception& e) {
      broken = true;
      fail("frame " + std::to_string(slot.index) + " failed in the sinks or on the GPU: " + e.what());
    }
    releaseSlot(*k);
  }
}

void Graph::run() {
  Impl& g = *impl_;
  if (g.options.devices != PortSetup::Devices::use) throw std::logic_error("a graph built to validate cannot run");
  std::unique_ptr<MetricsServer> server;
  if (g.metricsPort >= 0) {
    server = std::make_unique<MetricsServer>(*g.metrics, g.metricsAddress, g.metricsPort);
    spdlog::info("metrics at http://{}:{}/metrics", g.metricsAddress, server->port());
  }
  std::vector<std::thread> readers;
  for (size_t s : g.sources) readers.emplace_back([&g, s] { g.sourceLoop(s); });

  std::mutex tickMutex;
  std::condition_variable tick;
  bool done = false;
  std::thread reporter([&] {
    std::unique_lock lock(tickMutex);
    auto interval = std::chrono::duration<double>(g.summaryInterval);
    while (!tick.wait_for(lock, interval, [&] { return done; })) {
      MetricsReport report = g.metrics->report();
      if (g.options.logSummaries) spdlog::info("{}", Metrics::summaryLine(report));
      for (size_t i : g.sinks) g.nodes[i].sink->report(report);
    }
  });

  g.schedule();
  for (auto& t : readers) t.join();
  {  // no report after a sink has finished
    std::lock_guard lock(tickMutex);
    done = true;
  }
  tick.notify_all();
  reporter.join();
  for (size_t i : g.sinks) {
    try {
      g.nodes[i].sink->finish();
    } catch (const std::exception& e) {
      g.fail("sink '" + g.nodes[i].spec->name + "' failed to finish: " + e.what());
    }
  }
  if (!g.error.empty()) throw PipelineError(g.error);
}

}  // namespace pp
