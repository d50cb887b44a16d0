#include "stages/register.hpp"

#include "registered_stages.inc"  // registerEachStage, generated from the stages' CMakeLists

namespace pp {

void registerStages(Registry& registry) { registerEachStage(registry); }

void registerAllNodes(Registry& registry) {
  registerPipelineNodes(registry);
  registerStages(registry);
}

}  // namespace pp
