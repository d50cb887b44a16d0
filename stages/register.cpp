#include "stages/register.hpp"

namespace pp {

namespace compose {
void registerComposeStage(Registry& registry);
}

void registerStages(Registry& registry) { compose::registerComposeStage(registry); }

void registerAllNodes(Registry& registry) {
  registerPipelineNodes(registry);
  registerStages(registry);
}

}  // namespace pp
