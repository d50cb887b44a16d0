// CUDA stereo against the CPU reference, bit for bit: SGM on fresh random pairs (odd sizes, every
// disparity count, 4 and 8 paths, every option) and on real pairs (Aloe, the rectified chessboard
// pair); the remap on random pictures and maps and on the real calibration; depth. Outputs are
// poisoned first.
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuda/device.hpp"
#include "cuda/sgm.cuh"
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"
#include "tests/stereo_support.hpp"

namespace pp::stereo {
namespace {

struct Outputs {
  Image disparity, confidence;
};

Outputs onCpu(const SgmParams& p, const Image& left, const Image& right) {
  Outputs o{Image({Depth::u16, 1}, left.width(), left.height(), MemoryKind::host),
            Image({Depth::u8, 1}, left.width(), left.height(), MemoryKind::host)};
  sgmCpu(p, left, right, o.disparity, &o.confidence);
  return o;
}

// One frame through `sgm`.
Outputs runOnGpu(SgmCuda& sgm, const Image& left, const Image& right, bool withConfidence = true) {
  int w = left.width(), h = left.height();
  Stream stream;
  Image dl({Depth::u8, 1}, w, h, MemoryKind::device), dr({Depth::u8, 1}, w, h, MemoryKind::device);
  Image dd({Depth::u16, 1}, w, h, MemoryKind::device), dc({Depth::u8, 1}, w, h, MemoryKind::device);
  fillBytes(dd, 0xA5);
  fillBytes(dc, 0xA5);
  copyImage(left, dl, stream.handle());
  copyImage(right, dr, stream.handle());
  sgm.compute(dl, dr, dd, withConfidence ? &dc : nullptr, stream.handle());
  Outputs o{Image({Depth::u16, 1}, w, h, MemoryKind::host), Image({Depth::u8, 1}, w, h, MemoryKind::host)};
  copyImage(dd, o.disparity, stream.handle());
  copyImage(dc, o.confidence, stream.handle());
  stream.synchronize();
  return o;
}

Outputs onGpu(const SgmParams& p, const Image& left, const Image& right, bool withConfidence = true) {
  SgmCuda sgm(p, left.width(), left.height());
  return runOnGpu(sgm, left, right, withConfidence);
}

// Three frames through one matcher (random, a shifted pair, random), each against the CPU.
void expectFramesMatchTheCpu(SgmCuda& sgm, const SgmParams& p, int w, int h, const std::string& what) {
  for (int frame = 0; frame < 3; ++frame) {
    auto [left, right] =
        frame == 1 ? test::shiftedPair(w, h, 40)
                   : std::pair{test::randomImage({Depth::u8, 1}, w, h), test::randomImage({Depth::u8, 1}, w, h)};
    Outputs want = onCpu(p, left, right), got = runOnGpu(sgm, left, right);
    EXPECT_TRUE(test::samePixels(want.disparity, got.disparity)) << what << ", frame " << frame;
    EXPECT_TRUE(test::samePixels(want.confidence, got.confidence)) << what << ", frame " << frame;
  }
}

struct Case {
  int width, height, disparities, paths, minDisparity;
  const char* options;  // letters switching things off or on: s subpixel off, u uniqueness 0, l no LR check, f no fill,
                        // m no median, a adaptive P2, w the sweeps (else the walkers, whatever the plan)
};

SgmParams paramsFor(const Case& c) {
  SgmParams p;
  p.disparities = c.disparities;
  p.paths = c.paths;
  p.minDisparity = c.minDisparity;
  std::string o = c.options;
  if (o.find('s') != std::string::npos) p.subpixel = false;
  if (o.find('u') != std::string::npos) p.uniqueness = 0;
  if (o.find('l') != std::string::npos) p.lrMaxDiff = -1;
  if (o.find('f') != std::string::npos) p.fill = false;
  if (o.find('m') != std::string::npos) p.median = false;
  if (o.find('a') != std::string::npos) p.p2Adaptive = true;
  p.sweeps = o.find('w') != std::string::npos ? Sweeps::on : Sweeps::off;
  return p;
}

// A device planned at least an AGX Orin's size (16 SMs of 164 KiB) holds a plan of the sweeps for
// every shape tested; a smaller one (an AGX Xavier's 8 SMs of 96 KiB, an Orin Nano's 4) may hold
// none at 256 disparities or at wide shapes, and walks the rows around the other walkers instead.
bool holdsEverySweepPlan() {
  return plannedMultiprocessors() >= 16 && plannedSharedMemoryPerMultiprocessor() >= 164 * 1024;
}

// Where the sweeps are asked for and apply, the device takes them (else a case would test the
// rows around twice), or a device smaller than an Orin has no plan of them.
void expectSweepsWhereAsked(const SgmParams& p, int width, int height) {
  if (p.sweeps == Sweeps::on && p.paths == 8 && height >= 2) {
    const SweepPlan s = planSweeps(p, width, height);
    if (holdsEverySweepPlan())
      EXPECT_GT(s.bands, 0) << "the sweeps do not fit this device: " << s.without;
    else
      EXPECT_TRUE(s.bands > 0 || s.without.rfind("no plan of their bands fits", 0) == 0) << s.without;
  }
}

class CudaSgm : public ::testing::TestWithParam<Case> {};

TEST_P(CudaSgm, MatchesTheCpuBitForBit) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const Case& c = GetParam();
  SgmParams p = paramsFor(c);
  expectSweepsWhereAsked(p, c.width, c.height);
  for (bool shifted : {false, true}) {  // pure noise, and a textured pair with a true disparity
    auto [left, right] = shifted ? test::shiftedPair(c.width, c.height, c.minDisparity + c.disparities / 3)
                                 : std::pair{test::randomImage({Depth::u8, 1}, c.width, c.height),
                                             test::randomImage({Depth::u8, 1}, c.width, c.height)};
    Outputs want = onCpu(p, left, right), got = onGpu(p, left, right);
    EXPECT_TRUE(test::samePixels(want.disparity, got.disparity)) << (shifted ? "shifted pair" : "random pair");
    EXPECT_TRUE(test::samePixels(want.confidence, got.confidence)) << (shifted ? "shifted pair" : "random pair");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaSgm,
    ::testing::Values(Case{97, 61, 64, 8, 0, ""}, Case{131, 77, 128, 4, 0, ""}, Case{301, 45, 256, 8, 0, ""},
                      Case{77, 33, 64, 8, 5, "a"}, Case{160, 50, 64, 4, 3, "su"}, Case{65, 70, 128, 8, 0, "lfm"},
                      Case{33, 9, 64, 8, 0, "f"}, Case{1, 5, 64, 4, 0, ""},
                      Case{263, 41, 256, 4, 7, "a"},  // 4 paths at 256: the walk from the left first, a warp a walker
                      // Whole winner-takes-all rounds of pixels with every match left of the image.
                      Case{150, 31, 128, 8, 37, ""},
                      // The full width at 256 disparities: on an H100 or H200 the directions from the top
                      // need more warps than the aggregation's kernel leaves resident, so it takes the one
                      // built for a whole front (kWholeFront).
                      Case{2448, 9, 256, 8, 0, ""},
                      // A launch that does not fit at once on an H100 or H200: the rows go first, then
                      // the front from the top, then the one from the bottom (as on Aloe).
                      Case{1300, 70, 256, 8, 3, "a"},
                      // Taller than wide: the diagonal walkers wrap around the image several times, in
                      // 5 columns often within the steps whose loads are in flight.
                      Case{40, 130, 128, 8, 0, "a"}, Case{5, 40, 64, 8, 0, ""},
                      // The sweeps: bands of one or several warps of columns (one a device's SM), their
                      // handoffs every 8 rows, the image's sides inside a band, rows left over.
                      Case{97, 61, 64, 8, 0, "w"}, Case{77, 33, 64, 8, 5, "wa"}, Case{65, 70, 128, 8, 0, "wlfm"},
                      Case{33, 9, 64, 8, 0, "wf"}, Case{150, 31, 128, 8, 37, "w"}, Case{40, 130, 128, 8, 0, "wa"},
                      Case{5, 40, 64, 8, 0, "w"}, Case{1500, 41, 128, 8, 2, "wa"}, Case{1224, 3, 64, 8, 0, "w"},
                      // The winner the rows' walk from the right takes, without sub-pixel and uniqueness.
                      Case{160, 50, 128, 8, 3, "wsu"},
                      // Tall enough that, planned for 16 SMs, the rows take the narrow walkers (four runs
                      // a lane, cuda/sgm_rows.cu's withRowRuns); the smaller ones, and these on a big
                      // GPU's SMs, take the wide ones.
                      Case{40, 700, 64, 8, 0, "w"}, Case{33, 330, 128, 8, 1, "wa"},
                      // 4 paths with the rows walked around the columns' walkers.
                      Case{131, 77, 128, 4, 0, "w"}, Case{160, 50, 64, 4, 3, "wsua"}, Case{1, 5, 64, 4, 0, "w"},
                      Case{65, 70, 128, 4, 9, "wlfm"}, Case{40, 700, 64, 4, 0, "w"}, Case{57, 1, 128, 4, 0, "w"},
                      // ... at 256 disparities: the walk from the left stores the matching costs too.
                      Case{263, 41, 256, 4, 7, "wa"}, Case{301, 45, 256, 4, 0, "wsu"}, Case{40, 300, 256, 4, 3, "wlf"},
                      // ... and 8 at 256 disparities: the sweeps' costs from the census codes, the walk
                      // from the left storing the matching costs above the sums as well.
                      Case{301, 45, 256, 8, 0, "w"}, Case{2448, 9, 256, 8, 0, "wa"}, Case{1300, 70, 256, 8, 3, "w"},
                      // One row: no sweeps.
                      Case{57, 1, 128, 8, 0, "w"}));

// One matcher, several frames: each starts from zero sums (below 256 disparities the
// winner-takes-all clears the sums it reads for the next frame; at 256 the matching-cost pass
// rewrites every word; with the sweeps the rows' walk from the left stores the first sums), so
// each matches the CPU on its own.
TEST(CudaSgmFrames, EveryFrameOfOneMatcherMatchesTheCpu) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const int w = 211, h = 67;
  for (int disparities : {128, 256})
    for (auto [paths, sweeps] :
         {std::pair{4, Sweeps::off}, std::pair{4, Sweeps::on}, std::pair{8, Sweeps::off}, std::pair{8, Sweeps::on}}) {
      SgmParams p;
      p.disparities = disparities, p.paths = paths, p.sweeps = sweeps;
      SgmCuda sgm(p, w, h);
      expectFramesMatchTheCpu(sgm, p, w, h,
                              std::to_string(disparities) + " disparities, " + std::to_string(paths) + " paths" +
                                  (sweeps == Sweeps::on ? " (sweeps)" : ""));
    }
}

TEST(CudaSgmReal, AloeAndTheChessboardPairMatchTheCpu) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  SgmParams p;
  p.disparities = 256;
  Image left = readGreyImage(test::stereoData("aloeL.jpg")), right = readGreyImage(test::stereoData("aloeR.jpg"));
  Outputs want = onCpu(p, left, right), got = onGpu(p, left, right, false);
  EXPECT_TRUE(test::samePixels(want.disparity, got.disparity)) << "Aloe";
  test::StereoScore s = test::scoreAgainst(got.disparity, readImage(test::stereoData("aloeGT.png")));
  EXPECT_GE(s.density, 85.0);
  EXPECT_LE(s.bad2, 17.0);
  p.sweeps = Sweeps::on;
  expectSweepsWhereAsked(p, left.width(), left.height());
  EXPECT_TRUE(test::samePixels(want.disparity, onGpu(p, left, right, false).disparity)) << "Aloe, the sweeps";
  p.paths = 4;  // the rows around the columns
  const Image fourPaths = onCpu(p, left, right).disparity;
  EXPECT_TRUE(test::samePixels(fourPaths, onGpu(p, left, right, false).disparity))
      << "Aloe, 4 paths, the rows around the columns";
  p.sweeps = Sweeps::off;
  EXPECT_TRUE(test::samePixels(fourPaths, onGpu(p, left, right, false).disparity))
      << "Aloe, 4 paths, the walk from the left, then the other walkers";
  p.paths = 8, p.sweeps = Sweeps::automatic;

  StereoCalibration c = loadCalibration(test::stereoData("chessboard-calibration.yml"));
  Image cl = readGreyImage(test::stereoData("chessboard/left/01.jpg")),
        cr = readGreyImage(test::stereoData("chessboard/right/01.jpg"));
  Image rl(cl.format(), 640, 480, MemoryKind::host), rr(cl.format(), 640, 480, MemoryKind::host);
  remapCpu(cl, rectifyMap(c.left, 640, 480), rl);
  remapCpu(cr, rectifyMap(c.right, 640, 480), rr);
  p.disparities = 64;
  const Image chessboard = onCpu(p, rl, rr).disparity;
  EXPECT_TRUE(test::samePixels(chessboard, onGpu(p, rl, rr).disparity)) << "chessboard";
  p.sweeps = Sweeps::on;
  expectSweepsWhereAsked(p, 640, 480);
  EXPECT_TRUE(test::samePixels(chessboard, onGpu(p, rl, rr).disparity)) << "chessboard, the sweeps";
}

// The sweeps' bands follow the SMs planned (tests/CMakeLists.txt runs the SGM tests again planned
// for AGX Orin's 16 SMs: bands as wide as there, a block's columns in several passes a row).
TEST(CudaSgmPlan, SweepBandsFollowThePlannedSms) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  const int sms = deviceAttribute(cudaDevAttrMultiProcessorCount), planned = plannedMultiprocessors();
  const char* asked = std::getenv("POLARPIPE_PLAN_SMS");
  EXPECT_EQ(planned, asked && *asked ? std::min(std::atoi(asked), sms) : sms);
  SgmParams p;
  p.disparities = 128, p.paths = 8, p.sweeps = Sweeps::on;
  const SweepPlan plan = planSweeps(p, 1224, 1024);
  ASSERT_GT(plan.bands, 0) << "the sweeps do not fit this device";
  EXPECT_LE(plan.bands, planned * (plan.sweepsALaunch == 2 ? 1 : 2));
  EXPECT_GE(plan.bands * plan.bandWidth, 1224);
}

// The device the launchers plan for (cuda/device.hpp), while it lives.
class PlannedDevice {
 public:
  PlannedDevice(int sms, int sharedKib) : sms_(saved("POLARPIPE_PLAN_SMS")), kib_(saved("POLARPIPE_PLAN_SHARED_KIB")) {
    setenv("POLARPIPE_PLAN_SMS", std::to_string(sms).c_str(), 1);
    setenv("POLARPIPE_PLAN_SHARED_KIB", std::to_string(sharedKib).c_str(), 1);
  }
  ~PlannedDevice() {
    restore("POLARPIPE_PLAN_SMS", sms_);
    restore("POLARPIPE_PLAN_SHARED_KIB", kib_);
  }
  PlannedDevice(const PlannedDevice&) = delete;
  PlannedDevice& operator=(const PlannedDevice&) = delete;

 private:
  static std::optional<std::string> saved(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  static void restore(const char* name, const std::optional<std::string>& v) {
    if (v)
      setenv(name, v->c_str(), 1);
    else
      unsetenv(name);
  }
  std::optional<std::string> sms_, kib_;
};

// What the environment asks the plans for is a count, or an error that names it (no device needed).
TEST(CudaSgmPlan, APlannedDeviceThatIsNotACountIsNamed) {
  for (const char* name : {"POLARPIPE_PLAN_SMS", "POLARPIPE_PLAN_SHARED_KIB"})
    for (const char* bad : {"lots", "-4", "0", "12k"}) {
      PlannedDevice device(16, 164);
      setenv(name, bad, 1);
      try {
        if (std::string(name) == "POLARPIPE_PLAN_SMS")
          plannedMultiprocessors();
        else
          plannedSharedMemoryPerMultiprocessor();
        ADD_FAILURE() << name << "=" << bad << " was taken";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(std::string(name) + ": "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      }
    }
}

// Why this device cannot run what is planned for an AGX Orin (16 SMs, 164 KiB of shared memory
// each), or nothing.
std::string cannotStandForAnOrin() {
  if (!gpuAvailable()) return "no CUDA device: " + gpuDescription();
  if (deviceAttribute(cudaDevAttrMultiProcessorCount) < 16 ||
      deviceAttribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor) < 164 * 1024)
    return "smaller than an AGX Orin: " + gpuDescription();
  return {};
}

SgmParams eightPathSweeps() {
  SgmParams p;
  p.disparities = 128, p.paths = 8, p.sweeps = Sweeps::on;
  return p;
}

// Planned for an AGX Orin (16 SMs, 164 KiB of shared memory each) every band of both sweeps is
// resident at once; for an AGX Xavier (8 SMs, 96 KiB) an SM cannot hold a band of each sweep, so the
// sweeps go one a launch, their costs in a ring, and every frame still matches the CPU.
TEST(CudaSgmPlan, OneSweepALaunchWhereAnSmHoldsOnlyOneBandOfEach) {
  if (const std::string why = cannotStandForAnOrin(); !why.empty()) GTEST_SKIP() << why;
  const SgmParams p = eightPathSweeps();
  const int w = 1224, h = 24;
  const size_t reserved = deviceAttribute(cudaDevAttrReservedSharedMemoryPerBlock);
  {
    PlannedDevice orin(16, 164);
    const SweepPlan s = planSweeps(p, w, h);
    EXPECT_GE(s.bands, 16);
    EXPECT_LE(s.bands * s.sweepsALaunch, 2 * 16);
  }
  PlannedDevice xavier(8, 96);
  const SweepPlan s = planSweeps(p, w, h);
  ASSERT_EQ(s.sweepsALaunch, 1);
  EXPECT_TRUE(s.ring);
  EXPECT_LE(s.bands, 2 * 8);
  EXPECT_LE((s.bands + 7) / 8 * (s.sharedBytes + reserved), 96u * 1024) << "the bands an SM holds";
  SgmCuda sgm(p, w, h);
  expectFramesMatchTheCpu(sgm, p, w, h, "planned as a Xavier");
}

// Each layout a matcher can run is named, with why not the sweeps (or the rows around) where the
// matcher did not take them; and where the sweeps asked for fit no plan (one SM of 96 KiB), the rows
// are walked around the other six directions' walkers, and every frame matches the CPU.
TEST(CudaSgmPlan, TheLayoutIsNamedWithWhyNotTheOthers) {
  if (const std::string why = cannotStandForAnOrin(); !why.empty()) GTEST_SKIP() << why;
  SgmParams p = eightPathSweeps();
  {
    PlannedDevice orin(16, 164);
    p.sweeps = Sweeps::automatic;
    const SweepPlan s = planSweeps(p, 1224, 1024);
    EXPECT_EQ(SgmCuda(p, 1224, 1024).volumePasses(), 6) << "stored, reduced by each sweep, read";
    EXPECT_EQ(SgmCuda(p, 1224, 1024).layout(),
              "the sweeps: " + std::to_string(s.bands) + " bands of " + std::to_string(s.bandWidth) +
                  " columns a sweep, " + (s.sweepsALaunch == 2 ? "both sweeps in one launch" : "one sweep a launch") +
                  (s.ring ? ", costs in a ring" : ""));
    EXPECT_EQ(SgmCuda(p, 400, 24).layout(),
              "the walk from the left, then the other walkers; not the sweeps: auto: on 16 SMs their bands would be "
              "narrower than " +
                  std::to_string(kSweepsBandWidth) + " columns");
    p.sweeps = Sweeps::off;
    EXPECT_EQ(SgmCuda(p, 400, 24).layout(),
              "the walk from the left, then the other walkers; not the sweeps: sweeps: false");
    EXPECT_EQ(SgmCuda(p, 400, 24).volumePasses(), 16) << "stored, a reduction for each other path, read";
    // At 256 disparities, where auto declines the sweeps, it chooses between the rows around and the walkers.
    p.sweeps = Sweeps::automatic, p.disparities = 256;
    EXPECT_EQ(SgmCuda(p, 400, 24).layout(),
              "the walkers; not the sweeps: auto: on 16 SMs their bands would be narrower than " +
                  std::to_string(kSweepsBandWidth) + " columns; auto: fewer than " +
                  std::to_string(rowsAroundPixelsPerSm(8, 256)) + " pixels of the image an SM");
    p.disparities = 128, p.paths = 4;
    EXPECT_EQ(SgmCuda(p, 1224, 1024).layout(), "the rows walked around the other walkers; auto: at least " +
                                                   std::to_string(rowsAroundPixelsPerSm(4, 128)) +
                                                   " pixels of the image an SM");
    EXPECT_EQ(SgmCuda(p, 1224, 1024).volumePasses(), 6) << "stored, reduced by the two columns' walkers, read";
    EXPECT_EQ(SgmCuda(p, 160, 120).layout(), "the walkers; auto: fewer than " +
                                                 std::to_string(rowsAroundPixelsPerSm(4, 128)) +
                                                 " pixels of the image an SM");
    p.sweeps = Sweeps::off;
    EXPECT_EQ(SgmCuda(p, 1224, 1024).layout(), "the walkers; sweeps: false");
    EXPECT_EQ(SgmCuda(p, 1224, 1024).volumePasses(), 10) << "a reduction a path into zeros, read and cleared";
    p.disparities = 256;  // the matching costs stored by the walk from the left, not a pass of their own
    EXPECT_EQ(SgmCuda(p, 612, 512).layout(), "the walk from the left, then the other walkers; sweeps: false");
    EXPECT_EQ(SgmCuda(p, 612, 512).volumePasses(), 8) << "stored, three reductions, read";
  }
  PlannedDevice oneSm(1, 96);
  p = eightPathSweeps();
  SgmCuda sgm(p, 1224, 24);
  EXPECT_EQ(sgm.layout(),
            "the rows walked around the other walkers; not the sweeps: no plan of their bands fits the shared memory "
            "of 1 SM of 96 KiB");
  expectFramesMatchTheCpu(sgm, p, 1224, 24, "the sweeps asked for where they do not fit");
}

// Two matchers whose sweep blocks need different shared memory, both past the 48 KiB every device
// gives: the second's plan leaves the first's launches room, and both still match the CPU.
TEST(CudaSgmPlan, TwoMatchersOfDifferentBandsBothRun) {
  if (const std::string why = cannotStandForAnOrin(); !why.empty()) GTEST_SKIP() << why;
  const SgmParams p = eightPathSweeps();
  PlannedDevice orin(16, 164);
  const int h = 24, wide = 1224, narrow = 900;
  const SweepPlan widePlan = planSweeps(p, wide, h), narrowPlan = planSweeps(p, narrow, h);
  ASSERT_GT(narrowPlan.sharedBytes, 48u * 1024);
  ASSERT_LT(narrowPlan.sharedBytes, widePlan.sharedBytes);
  ASSERT_EQ(narrowPlan.ring, widePlan.ring) << "the same kernel";
  SgmCuda first(p, wide, h), second(p, narrow, h);
  expectFramesMatchTheCpu(first, p, wide, h, "the wider bands, planned first");
  expectFramesMatchTheCpu(second, p, narrow, h, "the narrower bands, planned second");
}

// By default the sweeps go where their bands are wide enough to be the faster: planned for an AGX
// Orin's 16 SMs at half the sensor's width, not on a big GPU's SMs (ctest runs this both ways), at
// 128 disparities and at 256.
TEST(CudaSgmPlan, AutomaticSweepsWhereTheBandsAreWide) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  for (int disparities : {128, 256}) {
    SgmParams p;
    p.disparities = disparities, p.paths = 8;
    EXPECT_EQ(p.sweeps, Sweeps::automatic);
    const SweepPlan automatic = planSweeps(p, 1224, 1024);
    p.sweeps = Sweeps::on;
    const SweepPlan asked = planSweeps(p, 1224, 1024);
    if (asked.bands == 0) {  // a device smaller than an Orin, at 256 disparities
      EXPECT_FALSE(holdsEverySweepPlan()) << "the sweeps do not fit this device at " << disparities;
      EXPECT_EQ(automatic.bands, 0);
      continue;
    }
    EXPECT_EQ(automatic.bands > 0, asked.bandWidth >= kSweepsBandWidth) << asked.bandWidth << "-column bands";
    if (plannedMultiprocessors() <= 16) {
      EXPECT_GT(automatic.bands, 0) << "an Orin's SMs take the sweeps by default at " << disparities;
    }
    if (plannedMultiprocessors() >= 64) {
      EXPECT_EQ(automatic.bands, 0) << "a big GPU's SMs take the walkers or the rows around at " << disparities;
    }
    p.sweeps = Sweeps::off;
    EXPECT_EQ(planSweeps(p, 1224, 1024).bands, 0);
  }
}

// `auto` walks the rows around the other walkers where an SM of the planned device has enough of
// the image (a Jetson's few SMs, a big GPU's at full size), 4 paths or 8 where the sweeps do not
// apply (256 disparities); `true` and `false` as asked. Planned for an Orin, frames of `auto` match.
TEST(CudaSgmPlan, TheRowsAroundTheOtherWalkersWhereAnSmHasEnoughPixels) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  SgmParams p;
  p.disparities = 128, p.paths = 4;
  EXPECT_EQ(p.sweeps, Sweeps::automatic);
  for (auto [paths, disparities] : {std::pair{4, 128}, std::pair{4, 256}, std::pair{8, 256}}) {
    p.paths = paths, p.disparities = disparities;  // 8 paths below 256: the sweeps' choice
    const long long least = rowsAroundPixelsPerSm(paths, disparities) * plannedMultiprocessors();
    const std::string what = std::to_string(paths) + " paths at " + std::to_string(disparities);
    EXPECT_TRUE(rowsAroundColumns(p, static_cast<int>(least / 512) + 1, 512)) << what;
    EXPECT_FALSE(rowsAroundColumns(p, static_cast<int>(least / 512) - 1, 512)) << what;
  }
  p.paths = 4, p.disparities = 128;
  {
    PlannedDevice orin(16, 164);
    EXPECT_TRUE(rowsAroundColumns(p, 612, 512));
    EXPECT_FALSE(rowsAroundColumns(p, 160, 120));
    p.disparities = 256;
    EXPECT_TRUE(rowsAroundColumns(p, 1224, 1024)) << "at 256, fewer bytes than the walk from the left's";
    p.disparities = 128;
    const int w = 203, h = 47;
    p.sweeps = Sweeps::on;
    SgmCuda sgm(p, w, h);
    expectFramesMatchTheCpu(sgm, p, w, h, "4 paths, the rows around, planned for 16 SMs");
    p.sweeps = Sweeps::automatic;
  }
  {
    PlannedDevice big(132, 228);
    if (plannedMultiprocessors() == 132) {
      EXPECT_FALSE(rowsAroundColumns(p, 1224, 1024)) << "a big GPU's SMs take the walkers at half size";
      EXPECT_TRUE(rowsAroundColumns(p, 2448, 2048)) << "and the rows around at full size";
      p.disparities = 256;
      EXPECT_FALSE(rowsAroundColumns(p, 2448, 2048)) << "at 256 the walk from the left and the walkers";
      p.disparities = 128;
    }
  }
  p.paths = 8;  // 8 paths below 256 disparities: the sweeps where they fit, else the walkers
  {
    PlannedDevice orin(16, 164);
    EXPECT_FALSE(rowsAroundColumns(p, 1224, 1024));
  }
  p.sweeps = Sweeps::on;  // where the sweeps do not fit
  EXPECT_TRUE(rowsAroundColumns(p, 16, 16));
  p.disparities = 256;
  EXPECT_TRUE(rowsAroundColumns(p, 16, 16));
  p.sweeps = Sweeps::off;
  EXPECT_FALSE(rowsAroundColumns(p, 2448, 2048));
  p.paths = 4;
  EXPECT_FALSE(rowsAroundColumns(p, 2448, 2048));
}

// Random maps reach outside the source, onto its border and into NaN; real maps from the calibration.
TEST(CudaRemap, MatchesTheCpuBitForBit) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  StereoCalibration c = loadCalibration(test::stereoData("chessboard-calibration.yml"));
  std::vector<std::pair<Image, Image>> cases;  // picture, map
  for (int channels : {1, 3}) {
    Image map = test::randomImage({Depth::f32, 2}, 67, 45);
    for (int y = 0; y < 45; ++y)
      for (int x = 0; x < 67; ++x) {
        map.view<float>().at(x, y, 0) = map.view<float>().at(x, y, 0) * 90.f - 10.f;
        map.view<float>().at(x, y, 1) = map.view<float>().at(x, y, 1) * 60.f - 8.f;
      }
    map.view<float>().at(3, 3, 0) = NAN;
    cases.emplace_back(test::randomImage({Depth::u8, channels}, 71, 41), std::move(map));
  }
  cases.emplace_back(readGreyImage(test::stereoData("chessboard/left/01.jpg")), rectifyMap(c.left, 640, 480));
  for (auto& [picture, map] : cases) {
    Image want(picture.format(), map.width(), map.height(), MemoryKind::host),
        got(picture.format(), map.width(), map.height(), MemoryKind::host);
    remapCpu(picture, map, want);
    Stream stream;
    Image dp(picture.format(), picture.width(), picture.height(), MemoryKind::device),
        dm(map.format(), map.width(), map.height(), MemoryKind::device);
    Image dout(picture.format(), map.width(), map.height(), MemoryKind::device);
    fillBytes(dout, 0xA5);
    copyImage(picture, dp, stream.handle());
    copyImage(map, dm, stream.handle());
    remapCuda(dp, dm, dout, stream.handle());
    copyImage(dout, got, stream.handle());
    stream.synchronize();
    EXPECT_TRUE(test::samePixels(want, got)) << toString(picture.format()) << " " << picture.width();
  }
}

TEST(CudaDepth, MatchesTheCpu) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  Image disparity = test::randomImage({Depth::u16, 1}, 53, 31);
  disparity.view<uint16_t>().at(0, 0) = kInvalidDisparity;
  DepthModel m{612.5f, 0.0167f, -0.3f};  // some disparities end behind the camera
  Image want({Depth::f32, 1}, 53, 31, MemoryKind::host), got({Depth::f32, 1}, 53, 31, MemoryKind::host);
  depthCpu(disparity, m, want);
  Stream stream;
  Image dd(disparity.format(), 53, 31, MemoryKind::device), dz({Depth::f32, 1}, 53, 31, MemoryKind::device);
  fillBytes(dz, 0xA5);
  copyImage(disparity, dd, stream.handle());
  depthCuda(dd, m, dz, stream.handle());
  copyImage(dz, got, stream.handle());
  stream.synchronize();
  EXPECT_TRUE(test::samePixels(want, got));
}

}  // namespace
}  // namespace pp::stereo
