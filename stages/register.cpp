#include "stages/register.hpp"

namespace pp {

namespace compose {
void registerComposeStage(Registry& registry);
}
namespace dof {
void registerDofStage(Registry& registry);
}
namespace faces {
void registerFaceDetectStage(Registry& registry);
}
namespace stereo {
void registerStereoStages(Registry& registry);
}
namespace demosaic {
void registerDemosaicStage(Registry& registry);
void registerSynthSource(Registry& registry);
}  // namespace demosaic

void registerStages(Registry& registry) {
  compose::registerComposeStage(registry);
  demosaic::registerDemosaicStage(registry);
  demosaic::registerSynthSource(registry);
  dof::registerDofStage(registry);
  stereo::registerStereoStages(registry);
  faces::registerFaceDetectStage(registry);
}

void registerAllNodes(Registry& registry) {
  registerPipelineNodes(registry);
  registerStages(registry);
}

}  // namespace pp
