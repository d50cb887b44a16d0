// The graph's buffers: every source's sets for the frames it may have queued or in flight, every
// stage's outputs and staged inputs for each frame in flight, streams, events and metrics.
#include "pipeline/graph_impl.hpp"
#include "pipeline/transfer.hpp"

namespace pp {

using detail::kNone;
using detail::NodeRuntime;
using detail::Slot;
using detail::SourcePool;

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

}  // namespace pp
