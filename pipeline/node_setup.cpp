// Port wiring: each node declares its inputs and outputs through PortSetup; the graph checks them
// against what the config connects and what the producers declared.
#include <algorithm>

#include "pipeline/graph_impl.hpp"
#include "pipeline/transfer.hpp"

namespace pp::detail {

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
                " is " + spec->text() + (spec->otherFormats.empty() ? "" : " (" + spec->otherFormats + ")"));
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

}  // namespace

std::vector<std::string> setUpNode(Graph::Impl& g, size_t index, Diagnostics& d) {
  NodeRuntime& n = g.nodes[index];
  NodeSetup setup(g, index, d);
  if (n.source) n.source->setup(setup);
  if (n.stage) n.stage->setup(setup);
  if (n.sink) n.sink->setup(setup);
  setup.checkUndeclared();
  return setup.uncheckedFrom_;
}

}  // namespace pp::detail
