// A sink that keeps what it is given, for graph tests.
#pragma once
#include <map>
#include <mutex>

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
    static const auto s = ParamSchema<Params>().add("key", &Params::key, "key").add("keep", &Params::keep, "keep copies");
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


}  // namespace pp
