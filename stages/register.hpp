#pragma once
#include "pipeline/registry.hpp"

namespace pp {
// Every stage type in stages/, and the sources that belong to a stage (polar_synth).
void registerStages(Registry& registry);
// Stages plus the pipeline's sources and sinks: what the CLI and the tests build graphs from.
void registerAllNodes(Registry& registry);
}  // namespace pp
