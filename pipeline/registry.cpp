#include "pipeline/registry.hpp"

namespace pp {

void Registry::add(NodeType type) {
  auto& table = types_[static_cast<int>(type.role)];
  std::string name = type.name;
  if (!table.emplace(name, std::move(type)).second) throw std::logic_error("node type '" + name + "' registered twice");
}

const NodeType* Registry::find(Role role, const std::string& name) const {
  const auto& table = types_[static_cast<int>(role)];
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names(Role role) const {
  std::vector<std::string> out;
  for (const auto& [name, type] : types_[static_cast<int>(role)]) out.push_back(name);
  return out;
}

}  // namespace pp
