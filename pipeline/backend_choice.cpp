// Which backend each stage runs on.
#include <spdlog/spdlog.h>

#include "pipeline/graph_impl.hpp"

namespace pp::detail {

std::optional<Backend> chooseBackend(const NodeSpec& spec, const Stage& stage, const PipelineSpec& pipeline,
                                     const GraphOptions& options, Diagnostics& d) {
  std::string wanted = !options.backend.empty() ? options.backend
                       : !spec.backend.empty()  ? spec.backend
                                                : pipeline.pipeline.backend;
  bool forcedHere = options.backend.empty() && !spec.backend.empty();
  if (wanted == "cuda" && !stage.hasCuda()) {
    if (forcedHere) {
      d.error(spec.mark, spec.keyPath + ".backend",
              "stage type '" + spec.type + "' has no CUDA backend (allowed: cpu, auto)");
      return std::nullopt;
    }
    spdlog::info("{}: '{}' has no CUDA backend; using cpu", spec.keyPath, spec.type);
    return Backend::cpu;
  }
  try {
    return stage.hasCuda() && useCuda(wanted) ? Backend::cuda : Backend::cpu;
  } catch (const std::invalid_argument& e) {
    d.error(spec.mark, spec.keyPath + ".backend", e.what());
    return std::nullopt;
  }
}

}  // namespace pp::detail
