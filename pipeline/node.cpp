#include "pipeline/node.hpp"

namespace pp {

std::string PortSpec::text() const {
  if (kind == PortKind::detections) return "detections";
  return toString(format) + " " + std::to_string(width) + "x" + std::to_string(height);
}

}  // namespace pp
