// A sink that keeps what it is given, for graph tests.
#pragma once
#include <map>
#include <mutex>

#include "pipeline/graph.hpp"
#include "pipeline/registry.hpp"
#include "tests/support.hpp"

namespace pp {

// Keeps a copy of every frame it is given.
struct Collected {
  std::mutex mutex;
  std::vector<Image> frames;
  std::vector<uint64_t> sequences;
};
inline Collected& collected(const std::string& name) {
  static std::map<std::string, Collected> all;
  return all[name];
}
struct CollectParams {
  std::string key = "default";
  bool keep = true;  // false: count frames only (allocates nothing)
};
class CollectSink : public Sink {
 public:
  using Params = CollectParams;
  static const ParamSchema<Params>& schema() {
    static const auto s =
        ParamSchema<Params>().add("key", &Params::key, "key").add("keep", &Params::keep, "keep copies");
    return s;
  }
  CollectSink(const Params& p, ParamContext&) : key_(p.key), keep_(p.keep) {}
  void setup(PortSetup& ports) override { ports.input("in"); }
  void consume(const SinkFrame& frame) override {
    const Image& in = frame.in("in");
    auto& c = collected(key_);
    if (!keep_) {
      std::lock_guard lock(c.mutex);
      c.sequences.push_back(frame.meta().sequence);
      return;
    }
    Image copy(in.format(), in.width(), in.height(), MemoryKind::host);
    copyImage(in, copy, nullptr);
    std::lock_guard lock(c.mutex);
    c.frames.push_back(std::move(copy));
    c.sequences.push_back(frame.meta().sequence);
  }

 private:
  std::string key_;
  bool keep_;
};

// A graph from YAML text, the CPU backend, at most `maxFrames` frames; nullptr when `d` has errors.
inline std::unique_ptr<Graph> buildGraph(const Registry& registry, const std::string& yaml, Diagnostics& d,
                                         uint64_t maxFrames = 0) {
  PipelineSpec spec = parsePipeline(yaml, "test.yaml", {}, d);
  if (!d.empty()) return nullptr;
  return Graph::build(spec, registry, d, {"cpu", maxFrames, false});
}

// The same, expecting no errors.
inline std::unique_ptr<Graph> buildGraph(const Registry& registry, const std::string& yaml, uint64_t maxFrames = 0) {
  Diagnostics d("test.yaml");
  auto graph = buildGraph(registry, yaml, d, maxFrames);
  EXPECT_TRUE(d.empty()) << d.text();
  return graph;
}

// Keeps every connected input and the metadata of every frame; safe to read while the graph runs.
struct Kept {
  std::mutex mutex;
  std::vector<FrameMeta> metas;
  std::vector<std::map<std::string, Image>> planes;  // per frame: port -> copy
  size_t count() {
    std::lock_guard lock(mutex);
    return metas.size();
  }
};
inline Kept& kept(const std::string& key) {
  static std::map<std::string, Kept> all;
  return all[key];
}
struct KeepParams {
  std::string key = "default";
};
class KeepSink : public Sink {
 public:
  using Params = KeepParams;
  static const ParamSchema<Params>& schema() {
    static const auto s = ParamSchema<Params>().add("key", &Params::key, "key");
    return s;
  }
  KeepSink(const Params& p, ParamContext&) : key_(p.key) {
    Kept& k = kept(key_);
    std::lock_guard lock(k.mutex);
    k.metas.clear();
    k.planes.clear();
  }
  void setup(PortSetup& ports) override {
    inputs_ = ports.connectedInputs();
    for (const auto& name : inputs_) ports.input(name);
  }
  void consume(const SinkFrame& frame) override {
    std::map<std::string, Image> planes;
    for (const auto& name : inputs_) {
      const Image& in = frame.in(name);
      Image copy(in.format(), in.width(), in.height(), MemoryKind::host);
      copyImage(in, copy, nullptr);
      planes.emplace(name, std::move(copy));
    }
    Kept& k = kept(key_);
    std::lock_guard lock(k.mutex);
    k.metas.push_back(frame.meta());
    k.planes.push_back(std::move(planes));
  }

 private:
  std::string key_;
  std::vector<std::string> inputs_;
};

}  // namespace pp
