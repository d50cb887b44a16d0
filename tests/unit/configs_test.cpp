// Every config shipped in config/ validates as `validate` does it, without a camera (what only a
// camera can tell is left unchecked, not an error). Configs that open a camera also run against
// Aravis' fake camera in tests/integration/aravis_test.cpp.
#include "pipeline/graph.hpp"
#include "stages/register.hpp"
#include "tests/support.hpp"

namespace pp {
namespace {

TEST(ShippedConfigs, EveryFileInConfigValidates) {
  Registry registry;
  registerAllNodes(registry);
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::sourceDir() / "config")) {
    if (entry.path().extension() != ".yaml") continue;
    Diagnostics d(entry.path().string());
    PipelineSpec spec = loadPipeline(entry.path().string(), {}, d);
    GraphOptions options{"cpu"};
    options.devices = PortSetup::Devices::none;
    if (d.empty()) Graph::build(spec, registry, d, options);
    EXPECT_TRUE(d.empty()) << d.text();
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace pp
