// Soak: the demo graph (config/demo.yaml, made smaller so the CPU backend keeps a brisk rate) loops
// for a bounded run while host memory and, with a GPU, device memory and image allocations are
// sampled: after warm-up they stay flat, the source drops nothing and every frame reaches both
// sinks.
#include <unistd.h>

#include <fstream>
#include <thread>

#include "pipeline/graph.hpp"
#include "stages/register.hpp"
#include "tests/support.hpp"

#if POLARPIPE_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace pp {
namespace {

double residentMb() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

double deviceUsedMb() {
#if POLARPIPE_HAS_CUDA
  size_t free = 0, total = 0;
  if (gpuAvailable() && cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<double>(total - free) / 1e6;
#endif
  return 0;
}

TEST(Soak, TheDemoLoopsWithFlatMemoryAndEveryFrameAtTheSinks) {
  const uint64_t frames = gpuAvailable() ? 600 : 80;
  test::TempDir dir;
  std::ofstream(dir / "calib.yaml")
      << "M1: [935, 0, 80, 0, 935, 69, 0, 0, 1]\nD1: [0, 0, 0, 0, 0]\nM2: [935, 0, 80, 0, 935, 69, 0, 0, 1]\n"
         "D2: [0, 0, 0, 0, 0]\nR: [1, 0, 0, 0, 1, 0, 0, 0, 1]\nT: [-0.16, 0, 0]\nR1: [1, 0, 0, 0, 1, 0, 0, 0, 1]\n"
         "R2: [1, 0, 0, 0, 1, 0, 0, 0, 1]\nP1: [935, 0, 80, 0, 0, 935, 69, 0, 0, 0, 1, 0]\n"
         "P2: [935, 0, 80, -149.6, 0, 935, 69, 0, 0, 0, 1, 0]\nQ: [1, 0, 0, -80, 0, 1, 0, -69, 0, 0, 0, 935, 0, 0, "
         "6.25, 0]\n";
  Registry registry;
  registerAllNodes(registry);
  Diagnostics d("demo.yaml");
  std::string calib = dir / "calib.yaml";
  PipelineSpec spec =
      loadPipeline((test::sourceDir() / "config/demo.yaml").string(),
                   {"sources.cams.params.loop=true", "sources.cams.params.downscale=4", "sources.cams.params.frames=12",
                    "sources.cams.params.overlay_at=[60, 15]", "sources.cams.params.overlay_disparity=50",
                    "sources.cams.params.overlay_step=[1, 0]", "stages.rectified.params.calibration=" + calib,
                    "stages.sgm.params.calibration=" + calib, "stages.sgm.params.disparities=64",
                    "sinks.video.params.mp4=" + dir / "soak.mp4", "sinks.boxes.params.path=" + dir / "faces.jsonl"},
                   d);
  auto graph = d.empty() ? Graph::build(spec, registry, d, {"", frames, false}) : nullptr;
  ASSERT_TRUE(graph) << d.text();
  std::thread runner([&] { graph->run(); });
  double hostAtWarm = 0, deviceAtWarm = 0, hostPeak = 0, devicePeak = 0;
  uint64_t allocationsAtWarm = 0;
  while (graph->metrics().framesDone() < frames) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t done = graph->metrics().framesDone();
    if (done >= frames / 4 && hostAtWarm == 0) {
      hostAtWarm = residentMb(), deviceAtWarm = deviceUsedMb(), allocationsAtWarm = imageAllocations();
    }
    if (hostAtWarm > 0) hostPeak = std::max(hostPeak, residentMb()), devicePeak = std::max(devicePeak, deviceUsedMb());
  }
  runner.join();
  uint64_t allocationsAtEnd = imageAllocations();
  std::string table = graph->metrics().table();
  graph.reset();  // sinks flushed and closed
  RecordProperty("host_mb_at_warm", std::to_string(hostAtWarm));
  RecordProperty("host_mb_peak", std::to_string(hostPeak));
  EXPECT_LT(hostPeak - hostAtWarm, 16.0) << "host memory grew from " << hostAtWarm << " MB to " << hostPeak << " MB";
  EXPECT_LT(devicePeak - deviceAtWarm, 1.0)
      << "device memory grew from " << deviceAtWarm << " MB to " << devicePeak << " MB";
  // The CUDA backends hold all their scratch; the CPU references (SGM's volume, the face pyramid)
  // allocate theirs per frame and free it, which the host memory check above covers.
  if (gpuAvailable()) {
    EXPECT_EQ(allocationsAtEnd, allocationsAtWarm) << "images allocated after warm-up";
  }
  EXPECT_NE(table.find("source cams          dropped 0, incomplete 0, unpaired 0"), std::string::npos) << table;
  EXPECT_NE(table.find("video_frames " + std::to_string(frames) + " video_dropped 0"), std::string::npos) << table;
  std::ifstream lines(dir / "faces.jsonl");
  uint64_t count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_EQ(count, frames) << "a detections line per frame";
}

}  // namespace
}  // namespace pp
