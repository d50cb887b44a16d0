// Inside the graph: what each node holds at run time, the buffers of sources and frames in flight,
// and Graph::Impl, which the graph's parts share: building (graph.cpp), port wiring
// (node_setup.cpp), backend choice (backend_choice.cpp), buffers (buffers.cpp) and the scheduler
// (scheduler.cpp). Only those files include it.
#pragma once
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>

#include "pipeline/frame_queue.hpp"
#include "pipeline/graph.hpp"

namespace pp {

namespace detail {

constexpr size_t kNone = static_cast<size_t>(-1);

struct Output {
  PortSpec spec;
  MemoryKind memory;
};

// One connected input of a stage or sink.
struct Binding {
  std::string port;
  size_t producer = kNone;
  std::string producerPort;
  PortSpec spec;
  bool staged = false;  // copied into a buffer in the consumer's memory before it runs
  MemoryKind stagedMemory = MemoryKind::host;
};

struct NodeRuntime {
  const NodeSpec* spec = nullptr;
  Backend backend = Backend::cpu;
  std::unique_ptr<Source> source;
  std::unique_ptr<Stage> stage;
  std::unique_ptr<Sink> sink;
  std::map<std::string, Output> outputs;
  std::vector<Binding> inputs;
  std::unique_ptr<Stream> stream;
  bool ok = true;
  size_t metricsIndex = kNone;  // index among stages (or sources) in Metrics
  const Binding* binding(const std::string& port) const {
    for (const auto& b : inputs)
      if (b.port == port) return &b;
    return nullptr;
  }
};

// A source's buffers for one frame.
struct BufferSet {
  std::map<std::string, Image> images;
  FrameMeta meta;
};

class SourcePool {
 public:
  std::vector<BufferSet> sets;

  void init() {
    for (size_t i = 0; i < sets.size(); ++i) free_.push_back(i);
  }
  // kNone when stopping.
  size_t acquire(const std::atomic<bool>& stopping) {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty() || stopping; });
    if (free_.empty()) return kNone;
    size_t i = free_.front();
    free_.pop_front();
    return i;
  }
  std::function<void(size_t)> recycle;  // sources that fill their own buffers take them back

  void release(size_t i) {
    if (recycle) return recycle(i);
    std::lock_guard lock(mutex_);
    free_.push_back(i);
    available_.notify_one();
  }
  void wake() {
    std::lock_guard lock(mutex_);
    available_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable available_;
  std::deque<size_t> free_;
};

// Everything one frame in flight owns.
struct Slot {
  std::vector<std::map<std::string, Image>> images;           // per node: stage outputs
  std::vector<std::map<std::string, Detections>> detections;  // per node: stage outputs
  std::vector<std::map<std::string, Image>> staged;           // per node: copied inputs, by port
  std::vector<std::unique_ptr<Event>> start, done;            // per node
  std::vector<double> cpuMs;                                  // per node
  std::vector<size_t> sourceSets;                             // per node (sources): the BufferSet in use
  Event sinkReady;
  FrameMeta meta;
  uint64_t index = 0;
};

// Backend of a stage: --backend, else the stage's own, else the pipeline's; auto takes CUDA when
// a device is present and the stage has a CUDA backend. Nothing (reported) where it cannot be had.
std::optional<Backend> chooseBackend(const NodeSpec& spec, const Stage& stage, const PipelineSpec& pipeline,
                                     const GraphOptions& options, Diagnostics& d);

}  // namespace detail

struct Graph::Impl {
  PipelineSpec spec;  // the graph's own copy: nodes point into it
  GraphOptions options;
  bool uncheckedNodes = false;  // some node could not be checked without its device (validate)
  std::vector<detail::NodeRuntime> nodes;
  std::vector<size_t> sources, stageOrder, sinks;
  // stageOrder split in two, each part in that order: the stages that only enqueue, run by the
  // scheduling thread, and those that wait for the device (CPU backends, waitsForDevice) with
  // everything downstream of them, run by a second thread on the frames the first hands it.
  std::vector<size_t> enqueueOrder, waitingOrder;
  std::vector<detail::SourcePool> pools;                    // per node index (only sources use theirs)
  std::vector<std::unique_ptr<FrameQueue<size_t>>> queues;  // per node index (sources)
  std::vector<detail::Slot> slots;
  std::unique_ptr<Stream> sinkStream;
  std::unique_ptr<Metrics> metrics;
  std::atomic<bool> stopping{false};
  std::atomic<bool> waitingFailed{false};  // the second scheduling thread failed: admit no more frames
  int metricsPort = -1;
  std::string metricsAddress;
  double summaryInterval = 1;

  std::mutex slotMutex;
  std::condition_variable slotFreed;
  std::deque<size_t> freeSlots;

  std::mutex errorMutex;
  std::string error;

  void fail(const std::string& message) {
    {
      std::lock_guard lock(errorMutex);
      if (error.empty()) error = message;
    }
    requestStop();
  }
  // Sources stop reading; what they already queued is still processed.
  void requestStop() {
    stopping = true;
    for (size_t s : sources) {
      pools[s].wake();
      queues[s]->close();
    }
  }

  const Image& produced(detail::Slot& slot, const detail::Binding& b) {
    const detail::NodeRuntime& p = nodes[b.producer];
    if (p.source) return pools[b.producer].sets[slot.sourceSets[b.producer]].images.at(b.producerPort);
    return slot.images[b.producer].at(b.producerPort);
  }
  const Image& inputImage(detail::Slot& slot, size_t node, const detail::Binding& b) {
    return b.staged ? slot.staged[node].at(b.port) : produced(slot, b);
  }

  void allocate();
  void sourceLoop(size_t node);
  bool pairFrames(detail::Slot& slot);
  void splitStages();
  void schedule();
  void runWaitingStages(FrameQueue<size_t>& enqueued, FrameQueue<size_t>& finished);
  void runStage(detail::Slot& slot, size_t node);
  void releaseAfterFailure(size_t slot);
  void releaseSlot(size_t slot);
  void complete(FrameQueue<size_t>& finished);
};

namespace detail {
// Sets node `index` up (its ports wired to what it reads, its outputs declared); errors go to `d`.
// Returns the nodes with errors it reads from, whose wiring to it could not be checked.
std::vector<std::string> setUpNode(Graph::Impl& g, size_t index, Diagnostics& d);
}  // namespace detail

}  // namespace pp
