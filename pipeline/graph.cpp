// Building the graph: every node created and its params checked, inputs resolved, stages ordered
// after what they read (cycles reported), ports wired; and what a built graph tells about itself.
#include <filesystem>
#include <functional>

#include "pipeline/graph_impl.hpp"

namespace pp {

using detail::kNone;
using detail::NodeRuntime;

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
      ParamContext ctx{d,
                       ns.keyPath + ".params",
                       spec.baseDir,
                       ns.params,
                       ns.mark,
                       std::filesystem::path(spec.file).stem().string()};
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
      auto backend = detail::chooseBackend(ns, *n.stage, spec, options, d);
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
    std::vector<std::string> from = detail::setUpNode(*g, i, d);
    if (!from.empty()) unchecked.push_back(n.spec->name + " (reads " + joinList(from) + ")");
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

Graph::Graph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Graph::~Graph() {
  // Sources go first: a camera's driver may still write into the buffers the pools own.
  for (auto& n : impl_->nodes) n.source.reset();
}

void Graph::stop() { impl_->requestStop(); }
Metrics& Graph::metrics() { return *impl_->metrics; }

std::string Graph::describe() const {
  std::string out;
  for (const auto& n : impl_->nodes) {
    const std::string choices = n.stage ? n.stage->choices() : "";
    out += std::string(roleName(n.spec->role)) + " " + n.spec->name + " (" + n.spec->type +
           (n.stage ? ", " + std::string(backendName(n.backend)) : "") + (choices.empty() ? "" : ": " + choices) + ")";
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
