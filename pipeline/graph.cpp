#include "pipeline/graph.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "pipeline/frame_queue.hpp"
#include "pipeline/transfer.hpp"

namespace pp {

std::string PortSpec::text() const {
  if (kind == PortKind::detections) return "detections";
  return toString(format) + " " + std::to_string(width) + "x" + std::to_string(height);
}

namespace {

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

}  // namespace

struct Graph::Impl {
  PipelineSpec spec;  // the graph's own copy: nodes point into it
  GraphOptions options;
  bool uncheckedNodes = false;  // some node could not be checked without its device (validate)
  std::vector<NodeRuntime> nodes;
  std::vector<size_t> sources, stageOrder, sinks;
  // stageOrder split in two, each part in that order: the stages that only enqueue, run by the
  // scheduling thread, and those that wait for the device (CPU backends, waitsForDevice) with
  // everything downstream of them, run by a second thread on the frames the first hands it.
  std::vector<size_t> enqueueOrder, waitingOrder;
  std::vector<SourcePool> pools;                            // per node index (only sources use theirs)
  std::vector<std::unique_ptr<FrameQueue<size_t>>> queues;  // per node index (sources)
  std::vector<Slot> slots;
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

  const Image& produced(Slot& slot, const Binding& b) {
    const NodeRuntime& p = nodes[b.producer];
    if (p.source) return pools[b.producer].sets[slot.sourceSets[b.producer]].images.at(b.producerPort);
    return slot.images[b.producer].at(b.producerPort);
  }
  const Image& inputImage(Slot& slot, size_t node, const Binding& b) {
    return b.staged ? slot.staged[node].at(b.port) : produced(slot, b);
  }

  void allocate();
  void sourceLoop(size_t node);
  bool pairFrames(Slot& slot);
  void splitStages();
  void schedule();
  void runWaitingStages(FrameQueue<size_t>& enqueued, FrameQueue<size_t>& finished);
  void runStage(Slot& slot, size_t node);
  void releaseAfterFailure(size_t slot);
  void releaseSlot(size_t slot);
  void complete(FrameQueue<size_t>& finished);
};

namespace {

class NodeSetup : public PortSetup {
 public:
  NodeSetup(Graph::Impl& g, size_t index, Diagnostics& d) : g_(g), n_(g.nodes[index]), d_(d) {
    n_.inputs.reserve(n_.spec->inputs.size());  // input() hands out pointers into it
  }

  Backend backend() const override { return n_.backend; }

  const PortSpec* input(const std::string& name, bool required) override {
    if (const Binding* bound = n_.binding(name)) return &bound->spec;
    declared_.push_back(name);
    const InputSpec* in = configured(name);
    if (!in) {
      if (required) fail("input '" + name + "' is not connected (add it under inputs, as " + name + ": node.port)");
      return nullptr;
    }
    const NodeRuntime* producer = nullptr;
    size_t producerIndex = kNone;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].spec->name == in->from.node) producer = &g_.nodes[i], producerIndex = i;
    if (!producer || !producer->ok) {  // reported already, or upstream failed
      n_.ok = false;
      if (producer &&
          std::find(uncheckedFrom_.begin(), uncheckedFrom_.end(), producer->spec->name) == uncheckedFrom_.end())
        uncheckedFrom_.push_back(producer->spec->name);
      return nullptr;
    }
    auto out = producer->outputs.find(in->from.port);
    if (out == producer->outputs.end()) {
      std::vector<std::string> names;
      for (const auto& [port, o] : producer->outputs) names.push_back(port);
      std::string hint = suggestion(in->from.port, names);
      error(in->mark, n_.spec->keyPath + ".inputs." + name,
            "'" + in->from.node + "' has no output '" + in->from.port + "'" + (hint.empty() ? "" : "; " + hint) +
                " (outputs: " + joinList(names) + ")");
      return nullptr;
    }
    Binding b;
    b.port = name;
    b.producer = producerIndex;
    b.producerPort = in->from.port;
    b.spec = out->second.spec;
    n_.inputs.push_back(b);
    return &n_.inputs.back().spec;
  }

  std::vector<std::string> connectedInputs() const override {
    anyInput_ = true;
    std::vector<std::string> names;
    for (const auto& in : n_.spec->inputs) names.push_back(in.port);
    return names;
  }

  const PortSpec* imageInput(const std::string& name, const std::vector<Format>& allowed, bool required) override {
    const PortSpec* spec = input(name, required);
    if (!spec) return nullptr;
    bool formatOk =
        spec->kind == PortKind::image && std::find(allowed.begin(), allowed.end(), spec->format) != allowed.end();
    if (!formatOk) {
      std::vector<std::string> names;
      for (Format f : allowed) names.push_back(toString(f));
      error(configured(name)->mark, n_.spec->keyPath + ".inputs." + name,
            "expects an image of format " + joinList(names, " or ") + ", but " + configured(name)->from.text() +
                " is " + spec->text());
      return nullptr;
    }
    return spec;
  }

  void output(const std::string& name, const PortSpec& spec) override {
    if (spec.kind == PortKind::image && (spec.width <= 0 || spec.height <= 0)) {
      fail("output '" + name + "' would be empty (" + spec.text() + ")");
      return;
    }
    n_.outputs[name] = {spec, outputMemory(n_.backend, gpuAvailable())};
  }

  void fail(const std::string& message) override { error(n_.spec->mark, n_.spec->keyPath, message); }

  Devices devices() const override { return g_.options.devices; }

  void unchecked(const std::string& why) override {
    d_.note(n_.spec->keyPath + ": not checked: " + why);
    n_.ok = false;
    g_.uncheckedNodes = true;
  }

  std::string upstreamName(const std::string& input) const override {
    const InputSpec* in = configured(input);
    return in ? in->from.text() : "";
  }

  // Inputs given in the config that the node never asked for.
  void checkUndeclared() {
    if (anyInput_ || !n_.ok) return;
    for (const auto& in : n_.spec->inputs) {
      if (std::find(declared_.begin(), declared_.end(), in.port) != declared_.end()) continue;
      std::string hint = suggestion(in.port, declared_);
      error(in.mark, n_.spec->keyPath + ".inputs." + in.port,
            "'" + n_.spec->type + "' has no input '" + in.port + "'" + (hint.empty() ? "" : "; " + hint) +
                (declared_.empty() ? " (it takes no inputs)" : " (inputs: " + joinList(declared_) + ")"));
    }
  }

 private:
  const InputSpec* configured(const std::string& name) const {
    for (const auto& in : n_.spec->inputs)
      if (in.port == name) return &in;
    return nullptr;
  }
  void error(const YAML::Mark& mark, const std::string& keyPath, const std::string& message) {
    d_.error(mark, keyPath, message);
    n_.ok = false;
  }

  Graph::Impl& g_;
  NodeRuntime& n_;
  Diagnostics& d_;
  std::vector<std::string> declared_;
  mutable bool anyInput_ = false;

 public:
  // The nodes with errors this one reads from: its wiring to them could not be checked.
  std::vector<std::string> uncheckedFrom_;
};

// Backend of a stage: --backend, else the stage's own, else the pipeline's; auto takes CUDA when
// a device is present and the stage has a CUDA backend.
std::optional<Backend> chooseBackend(const NodeSpec& spec, const Stage& stage, const PipelineSpec& pipeline,
                                     const GraphOptions& options, Diagnostics& d) {
  std::string wanted = !options.backend.empty() ? options.backend
                       : !spec.backend.empty()  ? spec.backend
                                                : pipeline.pipeline.backend;
  bool forcedHere = options.backend.empty() && !spec.backend.empty();
  if (wanted == "cpu") return Backend::cpu;
  if (wanted == "cuda") {
    if (!stage.hasCuda()) {
      if (forcedHere) {
        d.error(spec.mark, spec.keyPath + ".backend",
                "stage type '" + spec.type + "' has no CUDA backend (allowed: cpu, auto)");
        return std::nullopt;
      }
      spdlog::info("{}: '{}' has no CUDA backend; using cpu", spec.keyPath, spec.type);
      return Backend::cpu;
    }
    if (!gpuAvailable()) {
      d.error(spec.mark, spec.keyPath + ".backend", "cuda requested, but " + gpuDescription());
      return std::nullopt;
    }
    return Backend::cuda;
  }
  return stage.hasCuda() && gpuAvailable() ? Backend::cuda : Backend::cpu;
}

}  // namespace

std::unique_ptr<Graph> Graph::build(const PipelineSpec& given, const Registry& registry, Diagnostics& d,
                                    const GraphOptions& options) {
  auto g = std::make_unique<Impl>();
  g->spec = given;
  const PipelineSpec& spec = g->spec;
  g->options = options;
  g->metricsPort = spec.metrics.port;
  g->metricsAddress = spec.metrics.address;
  g->summaryInterval = spec.metrics.intervalS;

  // Create every node; its params are validated by its type's schema.
  for (const auto& ns : spec.nodes) {
    NodeRuntime n;
    n.spec = &ns;
    const NodeType* type = ns.type.empty() ? nullptr : registry.find(ns.role, ns.type);
    if (!type) {
      if (!ns.type.empty()) {
        auto names = registry.names(ns.role);
        std::string hint = suggestion(ns.type, names);
        d.error(ns.typeMark, ns.keyPath + ".type",
                "unknown " + std::string(roleName(ns.role)) + " type '" + ns.type + "'" +
                    (hint.empty() ? "" : "; " + hint) + " (types: " + joinList(names) + ")");
      }
      n.ok = false;
    } else {
      ParamContext ctx{d, ns.keyPath + ".params", spec.baseDir, ns.params, ns.mark};
      AnyNode created = type->create(ctx);
      std::visit(
          [&](auto& ptr) {
            using T = std::decay_t<decltype(*ptr)>;
            if constexpr (std::is_same_v<T, Source>)
              n.source = std::move(ptr);
            else if constexpr (std::is_same_v<T, Stage>)
              n.stage = std::move(ptr);
            else
              n.sink = std::move(ptr);
          },
          created);
      n.ok = n.source || n.stage || n.sink;
    }
    if (n.stage) {
      auto backend = chooseBackend(ns, *n.stage, spec, options, d);
      n.ok = n.ok && backend.has_value();
      n.backend = backend.value_or(Backend::cpu);
    }
    g->nodes.push_back(std::move(n));
  }

  // Every input must name an existing source or stage.
  auto indexOf = [&](const std::string& name) -> size_t {
    for (size_t i = 0; i < g->nodes.size(); ++i)
      if (g->nodes[i].spec->name == name) return i;
    return kNone;
  };
  std::vector<std::string> producers;
  for (const auto& ns : spec.nodes)
    if (ns.role != Role::sink && !ns.name.empty()) producers.push_back(ns.name);
  for (auto& n : g->nodes) {
    for (const auto& in : n.spec->inputs) {
      size_t p = indexOf(in.from.node);
      std::string where = n.spec->keyPath + ".inputs." + in.port;
      if (p == kNone) {
        std::string hint = suggestion(in.from.node, producers);
        d.error(in.mark, where,
                "no source or stage named '" + in.from.node + "'" + (hint.empty() ? "" : "; " + hint) +
                    " (nodes: " + joinList(producers) + ")");
        n.ok = false;
      } else if (g->nodes[p].spec->role == Role::sink) {
        d.error(in.mark, where, "'" + in.from.node + "' is a sink; sinks have no outputs");
        n.ok = false;
      }
    }
  }

  // Order the stages so each comes after what it reads; report cycles.
  std::vector<int> state(g->nodes.size(), 0);  // 0 new, 1 on the path, 2 done
  std::vector<size_t> path;
  std::function<void(size_t)> visit = [&](size_t i) {
    state[i] = 1;
    path.push_back(i);
    for (const auto& in : g->nodes[i].spec->inputs) {
      size_t p = indexOf(in.from.node);
      if (p == kNone || g->nodes[p].spec->role != Role::stage) continue;
      if (state[p] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), p); it != path.end(); ++it)
          cycle += g->nodes[*it].spec->name + " -> ";
        d.error(in.mark, g->nodes[i].spec->keyPath + ".inputs." + in.port, "cycle: " + cycle + g->nodes[p].spec->name);
        g->nodes[i].ok = false;
      } else if (state[p] == 0) {
        visit(p);
      }
    }
    path.pop_back();
    state[i] = 2;
    g->stageOrder.push_back(i);
  };
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Role role = g->nodes[i].spec->role;
    if (role == Role::source) g->sources.push_back(i);
    if (role == Role::sink) g->sinks.push_back(i);
    if (role == Role::stage && state[i] == 0) visit(i);
  }

  // Set up sources, then stages in order, then sinks: each sees its inputs' specs.
  std::vector<size_t> setupOrder = g->sources;
  setupOrder.insert(setupOrder.end(), g->stageOrder.begin(), g->stageOrder.end());
  setupOrder.insert(setupOrder.end(), g->sinks.begin(), g->sinks.end());
  std::vector<std::string> unchecked;
  for (size_t i : setupOrder) {
    NodeRuntime& n = g->nodes[i];
    if (!n.ok) continue;
    NodeSetup setup(*g, i, d);
    if (n.source) n.source->setup(setup);
    if (n.stage) n.stage->setup(setup);
    if (n.sink) n.sink->setup(setup);
    setup.checkUndeclared();
    if (!setup.uncheckedFrom_.empty())
      unchecked.push_back(n.spec->name + " (reads " + joinList(setup.uncheckedFrom_) + ")");
  }
  // Pairing by camera timestamp compares clocks: they must agree.
  if (spec.pipeline.pairBy == "camera_timestamp" && g->sources.size() > 1 &&
      g->options.devices == PortSetup::Devices::use)
    for (size_t i : g->sources)
      if (g->nodes[i].ok && g->nodes[i].source && !g->nodes[i].source->sharesClock())
        d.error(
            g->nodes[i].spec->mark, g->nodes[i].spec->keyPath,
            "pipeline.pair_by is camera_timestamp, but this camera's clock is its own: set ptp: true (IEEE 1588) on "
            "every camera, or pair_by: arrival "
            "(right for cameras fired by one trigger: a hardware line, or trigger: software with one trigger_group)");
  if (!unchecked.empty())
    d.note("not checked, since they read from nodes with errors or not checked: " + joinList(unchecked, "; "));
  if (!d.empty() || g->uncheckedNodes) return nullptr;

  g->splitStages();
  if (g->options.devices == PortSetup::Devices::use) g->allocate();  // a graph built to validate only describes
  return std::unique_ptr<Graph>(new Graph(std::move(g)));
}

void Graph::Impl::allocate() {
  bool gpu = gpuAvailable();
  bool integrated = gpuIsIntegrated();
  int inFlight = spec.pipeline.framesInFlight;
  sinkStream = std::make_unique<Stream>();

  std::vector<Metrics::StageInfo> stageInfo;
  std::vector<std::string> sourceNames;
  for (size_t i : stageOrder) {
    nodes[i].metricsIndex = stageInfo.size();
    stageInfo.push_back({nodes[i].spec->name, nodes[i].backend});
  }
  for (size_t i : sources) {
    nodes[i].metricsIndex = sourceNames.size();
    sourceNames.push_back(nodes[i].spec->name);
  }
  metrics = std::make_unique<Metrics>(stageInfo, sourceNames, inFlight);
  for (auto& n : nodes) {
    if (n.source) metrics->addCounters(n.spec->name, n.source->counters());
    if (n.sink) metrics->addCounters(n.spec->name, n.sink->counters());
  }

  for (auto& n : nodes) {
    n.stream = std::make_unique<Stream>();
    Backend consumer = n.stage ? n.backend : Backend::cpu;  // sinks read on the host
    for (auto& b : n.inputs) {
      if (b.spec.kind != PortKind::image) continue;
      MemoryKind have = nodes[b.producer].outputs.at(b.producerPort).memory;
      b.staged = !readableInPlace(have, consumer, integrated);
      b.stagedMemory = outputMemory(consumer, gpu);
    }
  }

  // A source keeps a buffer set for each frame in flight, each queued frame, and the one it reads.
  pools = std::vector<SourcePool>(nodes.size());
  queues.resize(nodes.size());
  for (size_t s : sources) {
    bool live = nodes[s].source->live();
    size_t queueCapacity = live ? 2 : static_cast<size_t>(inFlight);
    queues[s] = std::make_unique<FrameQueue<size_t>>(queueCapacity);
    pools[s].sets.resize(static_cast<size_t>(inFlight) + queueCapacity + 1);
    for (auto& set : pools[s].sets)
      for (const auto& [port, out] : nodes[s].outputs)
        if (out.spec.kind == PortKind::image)
          set.images.emplace(
              port, Image(out.spec.format, out.spec.width, out.spec.height, out.memory,
                          out.spec.pitch ? out.spec.pitch : pitchFor(out.spec.format, out.spec.width), out.spec.tail));
    pools[s].init();
    Source& source = *nodes[s].source;
    if (source.fillsOwnBuffers()) {
      std::vector<BufferSetImages> sets;
      for (auto& set : pools[s].sets) {
        BufferSetImages& images = sets.emplace_back();
        for (auto& [port, image] : set.images) images[port] = &image;
      }
      source.bindBuffers(sets);
      pools[s].recycle = [&source](size_t set) { source.recycle(set); };
    }
  }

  slots = std::vector<Slot>(static_cast<size_t>(inFlight));
  for (size_t k = 0; k < slots.size(); ++k) {
    Slot& slot = slots[k];
    slot.images.resize(nodes.size());
    slot.detections.resize(nodes.size());
    slot.staged.resize(nodes.size());
    slot.cpuMs.assign(nodes.size(), 0);
    slot.sourceSets.assign(nodes.size(), kNone);
    for (size_t i = 0; i < nodes.size(); ++i) {
      slot.start.push_back(std::make_unique<Event>());
      slot.done.push_back(std::make_unique<Event>());
      const NodeRuntime& n = nodes[i];
      if (n.stage)
        for (const auto& [port, out] : n.outputs) {
          if (out.spec.kind == PortKind::image)
            slot.images[i].emplace(port, Image(out.spec.format, out.spec.width, out.spec.height, out.memory));
          else
            slot.detections[i].emplace(port, Detections{});
        }
      for (const auto& b : n.inputs)
        if (b.staged) slot.staged[i].emplace(b.port, Image(b.spec.format, b.spec.width, b.spec.height, b.stagedMemory));
    }
    freeSlots.push_back(k);
  }
}

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

Graph::Graph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Graph::~Graph() {
  // Sources go first: a camera's driver may still write into the buffers the pools own.
  for (auto& n : impl_->nodes) n.source.reset();
}

void Graph::stop() { impl_->requestStop(); }
Metrics& Graph::metrics() { return *impl_->metrics; }

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
    while (!tick.wait_for(lock, interval, [&] { return done; }))
      if (g.options.logSummaries) spdlog::info("{}", g.metrics->summaryLine());
  });

  g.schedule();
  for (auto& t : readers) t.join();
  for (size_t i : g.sinks) {
    try {
      g.nodes[i].sink->finish();
    } catch (const std::exception& e) {
      g.fail("sink '" + g.nodes[i].spec->name + "' failed to finish: " + e.what());
    }
  }
  {
    std::lock_guard lock(tickMutex);
    done = true;
  }
  tick.notify_all();
  reporter.join();
  if (!g.error.empty()) throw PipelineError(g.error);
}

std::string Graph::describe() const {
  std::string out;
  for (const auto& n : impl_->nodes) {
    out += std::string(roleName(n.spec->role)) + " " + n.spec->name + " (" + n.spec->type +
           (n.stage ? ", " + std::string(backendName(n.backend)) : "") + ")";
    for (const auto& b : n.inputs)
      out += " <- " + b.port + "=" + impl_->nodes[b.producer].spec->name + "." + b.producerPort;
    for (const auto& [port, o] : n.outputs) out += " -> " + port + " [" + o.spec.text() + "]";
    out += "\n";
  }
  return out;
}

std::vector<std::string> Graph::destinations() const {
  std::vector<std::string> out;
  for (size_t i : impl_->sinks) {
    std::string where = impl_->nodes[i].sink->destination();
    if (!where.empty()) out.push_back(impl_->nodes[i].spec->name + ": " + where);
  }
  return out;
}

}  // namespace pp
