// Node types by name. Each type registers a factory that validates its params (through its
// ParamSchema) and builds the node; `polarpipe types` prints the help of every type.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "config/params.hpp"
#include "config/pipeline_spec.hpp"
#include "pipeline/node.hpp"

namespace pp {

using AnyNode = std::variant<std::unique_ptr<Source>, std::unique_ptr<Stage>, std::unique_ptr<Sink>>;

struct NodeType {
  Role role;
  std::string name, summary;
  // Returns an empty node when the params had errors (reported to ctx).
  std::function<AnyNode(ParamContext& ctx)> create;
  std::function<std::string()> paramHelp;
};

class Registry {
 public:
  void add(NodeType type);
  const NodeType* find(Role role, const std::string& name) const;
  std::vector<std::string> names(Role role) const;
  const std::map<std::string, NodeType>& all(Role role) const { return types_[static_cast<int>(role)]; }

  // T has `using Params = ...;`, `static const ParamSchema<Params>& schema();`, a constructor
  // from (Params, ParamContext&) that may report errors, and derives from Source, Stage or Sink.
  template <class T> void add(Role role, std::string name, std::string summary) {
    add(NodeType{role, std::move(name), std::move(summary),
                 [](ParamContext& ctx) -> AnyNode {
                   size_t before = ctx.diagnostics.size();
                   auto params = T::schema().parse(ctx);
                   if (ctx.diagnostics.size() != before) return emptyOf<T>();
                   auto node = std::make_unique<T>(params, ctx);
                   if (ctx.diagnostics.size() != before) return emptyOf<T>();
                   return AnyNode(std::move(node));
                 },
                 [] { return T::schema().help(); }});
  }

 private:
  template <class T> static AnyNode emptyOf() {
    if constexpr (std::is_base_of_v<Source, T>)
      return std::unique_ptr<Source>();
    else if constexpr (std::is_base_of_v<Stage, T>)
      return std::unique_ptr<Stage>();
    else
      return std::unique_ptr<Sink>();
  }
  std::map<std::string, NodeType> types_[3];
};

// The pipeline's own sources and sinks (images, image_writer); stages register in stages/.
void registerPipelineNodes(Registry& registry);

}  // namespace pp
