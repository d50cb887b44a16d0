// Every config shipped in config/ validates.
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
    if (d.empty()) Graph::build(spec, registry, d, {"cpu"});
    EXPECT_TRUE(d.empty()) << d.text();
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace pp
