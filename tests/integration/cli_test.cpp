// The polarpipe binary as a user runs it: validate, run, and SIGINT draining cleanly.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "pipeline/gpu.hpp"
#include "pipeline/image_io.hpp"
#include "tests/process_support.hpp"
#include "tests/support.hpp"

namespace pp {
namespace {

std::string writeConfig(const test::TempDir& dir, double fps) {
  writeImage(dir / "a.png", test::randomImage({Depth::u8, 1}, 64, 48));
  writeImage(dir / "b.png", test::randomImage({Depth::u8, 1}, 64, 48));
  std::string path = dir / "p.yaml";
  std::ofstream(path)
      << "sources:\n  - {name: cam, type: images, params: {path: '*.png', loop: true, fps: " << fps
      << "}}\nstages:\n  - {name: view, type: compose, inputs: {a: cam.image}, params: {colormaps: [turbo]}}\n"
      << "sinks:\n  - {name: out, type: image_writer, inputs: {v: view.image}, params: {dir: frames}}\n";
  return path;
}

size_t filesIn(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  return static_cast<size_t>(
      std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}));
}

TEST(Cli, SigintStopsTheSourcesDrainsAndFlushes) {
  test::TempDir dir;
  std::string config = writeConfig(dir, 50);
  Child c = spawn({binary(), "run", config}, dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (filesIn(dir.path() / "frames") < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(filesIn(dir.path() / "frames"), 5u) << slurp(c.err);
  kill(c.pid, SIGINT);
  int code = waitFor(c, std::chrono::seconds(10));
  std::string err = slurp(c.err), out = slurp(c.out);
  EXPECT_EQ(code, 0) << err;
  EXPECT_NE(err.find("stopping"), std::string::npos) << err;
  EXPECT_NE(err.find("latency mean"), std::string::npos) << "the metrics table is printed at exit:\n" << err;
  size_t files = filesIn(dir.path() / "frames");
  EXPECT_NE(out.find("(" + std::to_string(files) + " frames)"), std::string::npos)
      << "every frame that finished was written: " << files << "\n"
      << out;
}

TEST(Cli, RunsAFixedNumberOfFramesAndSaysWhereTheOutputWent) {
  test::TempDir dir;
  std::string config = writeConfig(dir, 0);
  Child c = spawn({binary(), "run", config, "--frames", "6", "--backend", "cpu"}, dir);
  EXPECT_EQ(waitFor(c, std::chrono::seconds(30)), 0) << slurp(c.err);
  EXPECT_EQ(filesIn(dir.path() / "frames"), 6u);
  EXPECT_NE(slurp(c.out).find("output out: " + (dir.path() / "frames").string()), std::string::npos) << slurp(c.out);
  if (!gpuAvailable()) {  // in words a user understands, not the CUDA runtime's
    EXPECT_NE(slurp(c.err).find(POLARPIPE_HAS_CUDA ? "no NVIDIA GPU found, using the CPU backends"
                                                   : "no CUDA in this build, using the CPU backends"),
              std::string::npos)
        << slurp(c.err);
  }
}

TEST(Cli, ValidateReportsEveryErrorWithItsLineAndExitsNonZero) {
  test::TempDir dir;
  std::string path = dir / "bad.yaml";
  std::ofstream(path) << "pipeline:\n  frames_in_flight: 0\nsources:\n  - {name: cam, type: imgs}\n";
  Child c = spawn({binary(), "validate", path}, dir);
  EXPECT_EQ(waitFor(c, std::chrono::seconds(10)), 2);
  std::string err = slurp(c.err);
  EXPECT_NE(err.find(path + ":2:21: pipeline.frames_in_flight: expected an integer in [1, 16], got '0'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(path + ":4:23: sources.cam.type: unknown source type 'imgs'"), std::string::npos) << err;
  EXPECT_NE(err.find("2 errors"), std::string::npos) << err;
}

TEST(Cli, HelpAndVersionTellTheTruth) {
  test::TempDir dir;
  Child v = spawn({binary(), "--version"}, dir);
  EXPECT_EQ(waitFor(v, std::chrono::seconds(10)), 0);
  EXPECT_NE(slurp(v.out).find("polarpipe "), std::string::npos);
  Child h = spawn({binary(), "run", "--help"}, dir);
  EXPECT_EQ(waitFor(h, std::chrono::seconds(10)), 0);
  std::string help = slurp(h.out);
  for (const char* option : {"--frames", "--backend", "--set", "CONFIG"})
    EXPECT_NE(help.find(option), std::string::npos) << option << "\n" << help;
  Child top = spawn({binary(), "--help"}, dir);
  EXPECT_EQ(waitFor(top, std::chrono::seconds(10)), 0);
  EXPECT_NE(slurp(top.out).find("polarpipe run config/demo.yaml"), std::string::npos) << "an example to start from:\n"
                                                                                      << slurp(top.out);
#if !POLARPIPE_HAS_CUDA
  EXPECT_NE(slurp(top.out).find("this build has no CUDA"), std::string::npos) << slurp(top.out);
#endif
}

// `types` names every type first; `types NAME` shows one; an unknown name is an error with a hint.
TEST(Cli, TypesListsTheNamesFirstAndShowsOneByName) {
  test::TempDir dir;
  Child all = spawn({binary(), "types"}, dir);
  EXPECT_EQ(waitFor(all, std::chrono::seconds(10)), 0);
  std::string text = slurp(all.out);
  std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first.rfind("sources: ", 0), 0u) << text.substr(0, 400);
  for (const char* name : {" images", " replay", " stereo_synth"})
    EXPECT_NE(first.find(name), std::string::npos) << name << " in: " << first;
  Child one = spawn({binary(), "types", "dof"}, dir);
  EXPECT_EQ(waitFor(one, std::chrono::seconds(10)), 0);
  EXPECT_NE(slurp(one.out).find("dof - depth of field"), std::string::npos) << slurp(one.out);
  EXPECT_EQ(slurp(one.out).find("demosaic"), std::string::npos) << "only the type asked for:\n" << slurp(one.out);
  Child typo = spawn({binary(), "types", "dfo"}, dir);
  EXPECT_EQ(waitFor(typo, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(typo.err).find("no type named 'dfo'; did you mean 'dof'?"), std::string::npos) << slurp(typo.err);
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

TEST(Bench, ListsCasesAndRunsTheCpuOnesWithoutAGpu) {
  test::TempDir dir;
  std::string bench = (test::binaryDir() / "bin/polarpipe_bench").string();
  Child list = spawn({bench, "--list"}, dir);
  ASSERT_EQ(waitFor(list, std::chrono::seconds(10)), 0);
  EXPECT_NE(slurp(list.out).find("demosaic/rggb8-angles [gpu]"), std::string::npos) << slurp(list.out);
  Child run = spawn(
      {bench, "--case", "demosaic/mono8-angles.*", "--size", "64x48", "--iterations", "5", "--json", dir / "b.json"},
      dir);
  ASSERT_EQ(waitFor(run, std::chrono::seconds(60)), 0) << slurp(run.err);
  std::string out = slurp(run.out);
  EXPECT_NE(out.find("demosaic/mono8-angles/cpu"), std::string::npos) << out;
  if (!gpuAvailable()) {
    EXPECT_NE(out.find("no GPU: running the CPU cases only"), std::string::npos) << out;
  }
  EXPECT_NE(slurp(dir / "b.json").find("\"mpix_per_s\""), std::string::npos);
  Child bad = spawn({bench, "--case", "nothing-like-this"}, dir);
  EXPECT_EQ(waitFor(bad, std::chrono::seconds(10)), 2);
  if (slurp(list.out).find("graph/config [gpu]") == std::string::npos) return;  // built without the graph cases
  // graph/config without --config: an error when asked for alone, else left out, saying so.
  Child alone = spawn({bench, "--case", "graph/config"}, dir);
  EXPECT_EQ(waitFor(alone, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(alone.err).find("graph/config: name the config with --config FILE"), std::string::npos)
      << slurp(alone.err);
  Child among =
      spawn({bench, "--case", "graph/config|demosaic/mono8-angles/cpu", "--size", "64x48", "--iterations", "5"}, dir);
  ASSERT_EQ(waitFor(among, std::chrono::seconds(60)), 0) << slurp(among.err);
  EXPECT_NE(slurp(among.out).find("graph/config: left out (no --config FILE)"), std::string::npos) << slurp(among.out);
}

// --sms N: on a GPU the cases run on N of its SMs (or the few more the driver grants) and say how
// many; the graph cases, whose stages launch from threads of their own, and a machine without a
// GPU get a clear error.
TEST(Bench, SmsRunsTheCasesOnThatManySmsOrSaysWhyNot) {
  test::TempDir dir;
  std::string bench = (test::binaryDir() / "bin/polarpipe_bench").string();
  if (!gpuAvailable()) {
    Child run = spawn({bench, "--sms", "16", "--case", "stereo/sgm-half-d128-p8-sweeps"}, dir);
    EXPECT_EQ(waitFor(run, std::chrono::seconds(10)), 2);
    EXPECT_NE(slurp(run.err).find("--sms: " + gpuDescription()), std::string::npos) << slurp(run.err);
    return;
  }
  Child run = spawn({bench, "--sms", "8", "--case", "stereo/sgm-half-d128-p8-sweeps", "--size", "512x256",
                     "--iterations", "5", "--json", dir / "b.json"},
                    dir);
  ASSERT_EQ(waitFor(run, std::chrono::seconds(120)), 0) << slurp(run.err);
  const std::string out = slurp(run.out), json = slurp(dir / "b.json");
  const size_t on = out.find("\non ");
  ASSERT_NE(on, std::string::npos) << out;
  const int granted = std::stoi(out.substr(on + 4));
  EXPECT_GE(granted, 8) << out;
  EXPECT_NE(out.find(" SMs (a green context)"), std::string::npos) << out;
  EXPECT_NE(json.find("\"multiprocessors\": " + std::to_string(granted) + ","), std::string::npos) << json;
  EXPECT_NE(out.find("stereo/sgm-half-d128-p8-sweeps"), std::string::npos) << out;
  Child graph = spawn({bench, "--sms", "8", "--case", "graph/stereo-2448x2048-p8"}, dir);
  EXPECT_EQ(waitFor(graph, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(graph.err).find("which the green context does not reach"), std::string::npos) << slurp(graph.err);
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

TEST(Cli, ASecondSignalExitsAtOnce) {
  test::TempDir dir;
  // A slow graph (CPU demosaic of 1024x1024 raw frames, PNG files) so that draining takes a while.
  std::string config = dir / "slow.yaml";
  std::ofstream(config) << "pipeline: {backend: cpu}\nsources:\n  - {name: cam, type: polar_synth, params: {picture: '"
                        << test::picture("baboon.jpg")
                        << "', frames: 0, variants: 2}}\nstages:\n  - {name: polar, type: demosaic, inputs: {raw: "
                           "cam.raw}, params: {outputs: [angles, s0, aolp_visual]}}\n"
                        << "sinks:\n  - {name: out, type: image_writer, inputs: {a: polar.angle_0, b: polar.angle_45, "
                           "v: polar.aolp_visual}, params: {dir: frames}}\n";
  Child c = spawn({binary(), "run", config}, dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (filesIn(dir.path() / "frames") < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(filesIn(dir.path() / "frames"), 1u) << slurp(c.err);
  kill(c.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(c.pid, SIGINT);
  auto sent = std::chrono::steady_clock::now();
  EXPECT_EQ(waitFor(c, std::chrono::seconds(10)), 130) << slurp(c.err);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(500))
      << "the second signal does not wait for the drain";
}

}  // namespace
}  // namespace pp

namespace pp {
namespace {

TEST(Cli, DofOnFilesAndItsErrors) {
  test::TempDir dir;
  Image depth({Depth::f32, 1}, 512, 480, MemoryKind::host);
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 512; ++x) depth.view<float>().at(x, y) = x < 256 ? 0.3f : 1.0f;
  writeImage(dir / "depth.pfm", depth);
  std::string picture = test::picture("fruits.jpg");
  Child ok =
      spawn({binary(), "dof", picture, dir / "depth.pfm", "--focus-pixel", "100,100", "--out", dir / "out.png"}, dir);
  ASSERT_EQ(waitFor(ok, std::chrono::seconds(60)), 0) << slurp(ok.err);
  Image out = readImage(dir / "out.png"), in = readImage(picture);
  EXPECT_EQ(in.view<uint8_t>().at(100, 100, 1), out.view<uint8_t>().at(100, 100, 1)) << "the focused half is unchanged";
  Child outside =
      spawn({binary(), "dof", picture, dir / "depth.pfm", "--focus-pixel", "600,10", "--out", dir / "x.png"}, dir);
  EXPECT_EQ(waitFor(outside, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(outside.err).find("--focus-pixel 600,10 is outside the 512x480 image"), std::string::npos)
      << slurp(outside.err);
  Child neither = spawn({binary(), "dof", picture, dir / "depth.pfm", "--out", dir / "x.png"}, dir);
  EXPECT_EQ(waitFor(neither, std::chrono::seconds(10)), 2);
}

// Every pixel in front of the focus beyond r_max, each at its own depth: memory and time stay
// bounded by the radius levels (the reference once kept a full-size image per distinct depth and
// ran out of memory here).
TEST(Cli, DofMemoryIsBoundedWhateverTheDepthMapHolds) {
  test::TempDir dir;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> near(0.01f, 0.5f);
  Image depth({Depth::f32, 1}, 512, 480, MemoryKind::host);
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 512; ++x) depth.view<float>().at(x, y) = near(random);
  writeImage(dir / "depth.pfm", depth);
  writeImage(dir / "image.png", test::randomImage({Depth::u8, 3}, 512, 480));
  Child c = spawn({binary(), "dof", dir / "image.png", dir / "depth.pfm", "--focus-depth", "10", "--backend", "cpu",
                   "--out", dir / "out.png"},
                  dir, rlim_t{1} << 30);
  EXPECT_EQ(waitFor(c, std::chrono::seconds(120)), 0) << slurp(c.err);
}

// NaN and infinity pass CLI11's range checks; each floating-point option refuses them by name.
TEST(Cli, NotANumberIsRefusedByEveryFloatingPointOption) {
  test::TempDir dir;
  Image depth({Depth::f32, 1}, 64, 48, MemoryKind::host);
  writeImage(dir / "depth.pfm", depth);
  writeImage(dir / "image.png", test::randomImage({Depth::u8, 1}, 64, 48));
  std::string cascade = test::dataFile("cascades/haarcascade_frontalface_default.xml");
  std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--scale", {binary(), "faces", dir / "image.png", "--cascade", cascade, "--backend", "cpu", "--scale", "nan"}},
      {"--scale", {binary(), "faces", dir / "image.png", "--cascade", cascade, "--backend", "cpu", "--scale", "inf"}},
      {"--focus-depth",
       {binary(), "dof", dir / "image.png", dir / "depth.pfm", "--focus-depth", "nan", "--out", dir / "o.png"}},
      {"--k",
       {binary(), "dof", dir / "image.png", dir / "depth.pfm", "--focus-depth", "1", "--k", "nan", "--out",
        dir / "o.png"}},
      {"--k",
       {binary(), "dof", dir / "image.png", dir / "depth.pfm", "--focus-depth", "1", "--k", "-inf", "--out",
        dir / "o.png"}},
      {"--baseline-focal",
       {binary(), "dof", dir / "image.png", dir / "depth.pfm", "--focus-depth", "1", "--baseline-focal", "inf", "--out",
        dir / "o.png"}},
      {"--frames", {binary(), "run", test::sourceDir() / "config/demo.yaml", "--frames", "-1"}},
  };
  for (const auto& [option, args] : cases) {
    Child c = spawn(args, dir);
    EXPECT_EQ(waitFor(c, std::chrono::seconds(10)), 2) << args.back() << " for " << option << " ran or hung:\n"
                                                       << slurp(c.err);
    EXPECT_NE(slurp(c.err).find(option), std::string::npos) << slurp(c.err);
  }
}

// The chessboard pair rectified and matched: a PFM with +inf for invalid pixels and the 16-bit PNG
// holding the same disparities x 16; a pair of two sizes and a broken calibration are refused.
TEST(Cli, StereoOnFilesAndItsErrors) {
  test::TempDir dir;
  std::string data = (test::sourceDir() / "tests/data/stereo/").string();
  std::string left = data + "chessboard/left/01.jpg", right = data + "chessboard/right/01.jpg",
              calib = data + "chessboard-calibration.yml";
  Child ok = spawn({binary(), "stereo", left, right, "--calib", calib, "--disparities", "64", "--no-fill", "--backend",
                    "cpu", "--out", dir / "d.pfm", "--out-png", dir / "d.png"},
                   dir);
  ASSERT_EQ(waitFor(ok, std::chrono::seconds(60)), 0) << slurp(ok.err);
  Image pfm = readImage(dir / "d.pfm"), png = readImage(dir / "d.png");
  ASSERT_EQ(pfm.width(), 640);
  int invalid = 0;
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x) {
      float d = pfm.view<float>().at(x, y);
      uint16_t p = png.view<uint16_t>().at(x, y);
      if (std::isinf(d)) {
        ++invalid;
        EXPECT_EQ(p, 0);
      } else {
        EXPECT_EQ(static_cast<int>(d * 16), p);
      }
    }
  EXPECT_GT(invalid, 0) << "without fill some pixels fail the left-right check";

  writeImage(dir / "small.png", test::randomImage({Depth::u8, 1}, 32, 32));
  Child sizes = spawn({binary(), "stereo", left, dir / "small.png", "--out", dir / "x.pfm"}, dir);
  EXPECT_EQ(waitFor(sizes, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(sizes.err).find("is 640x480 but"), std::string::npos) << slurp(sizes.err);
  std::ofstream(dir / "bad.yml") << "M1: [1, 2]\n";
  Child broken = spawn({binary(), "stereo", left, right, "--calib", dir / "bad.yml", "--out", dir / "x.pfm"}, dir);
  EXPECT_EQ(waitFor(broken, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(broken.err).find("M1 has 2 values"), std::string::npos) << slurp(broken.err);
  // min_disparity's bound is the schema's and checkParams' (it was 4096 here, 3800 in YAML).
  Child far = spawn({binary(), "stereo", left, right, "--min-disparity", "4032", "--out", dir / "x.pfm"}, dir);
  EXPECT_NE(waitFor(far, std::chrono::seconds(10)), 0);
  EXPECT_NE(slurp(far.err).find("4031"), std::string::npos) << slurp(far.err);
}

// The polarizers' images and normals from a raw file: each written, min <= polarizer <= max and
// min <= S0 <= max at every pixel, and a polarizer at another angle gives another picture.
TEST(Cli, DemosaicWritesThePolarizersImagesAndNormals) {
  test::TempDir dir;
  Child synth = spawn({binary(), "synth", test::picture("fruits.jpg"), "--mosaic", "polar_mono", "--out-dir",
                       dir / "raw", "--dolp", "0.5", "--aolp", "radial"},
                      dir);
  ASSERT_EQ(waitFor(synth, std::chrono::seconds(30)), 0) << slurp(synth.err);
  auto demosaic = [&](const std::string& degrees, const std::string& out) {
    Child c = spawn({binary(), "demosaic", dir / "raw/raw.pgm", "--mosaic", "polar_mono", "--outputs",
                     "s0,min,max,polarizer,normals,normals_visual", "--polarizer-deg", degrees, "--backend", "cpu",
                     "--out-dir", dir / out},
                    dir);
    EXPECT_EQ(waitFor(c, std::chrono::seconds(60)), 0) << slurp(c.err);
  };
  demosaic("30", "a");
  demosaic("120", "b");
  Image s0 = readImage(dir / "a/s0.png"), lo = readImage(dir / "a/min.png"), hi = readImage(dir / "a/max.png"),
        at30 = readImage(dir / "a/polarizer.png"), at120 = readImage(dir / "b/polarizer.png");
  EXPECT_EQ(readImage(dir / "a/normals.pfm").format(), (Format{Depth::f32, 3}));
  EXPECT_EQ(readImage(dir / "a/normals_visual.png").format(), (Format{Depth::u8, 3}));
  int differ = 0;
  for (int y = 0; y < s0.height(); ++y)
    for (int x = 0; x < s0.width(); ++x) {
      int m = lo.view<uint8_t>().at(x, y), M = hi.view<uint8_t>().at(x, y), p = at30.view<uint8_t>().at(x, y);
      ASSERT_LE(m, s0.view<uint8_t>().at(x, y) + 1) << x << "," << y;
      ASSERT_GE(M + 1, s0.view<uint8_t>().at(x, y)) << x << "," << y;
      ASSERT_LE(m, p + 1) << x << "," << y;
      ASSERT_GE(M + 1, p) << x << "," << y;
      differ += std::abs(p - at120.view<uint8_t>().at(x, y)) > 4;
    }
  EXPECT_GT(differ, s0.width() * s0.height() / 4) << "crossed polarizers see different pictures";
}

// A file command takes its stage's parameters as the YAML does: every key an option of the same
// name (dashes for underscores) with the rule `types` prints for it, and a value the YAML refuses
// refused on the command line with the same words.
TEST(Cli, FileCommandsOfferTheirStagesParametersWithTheSameRules) {
  test::TempDir dir;
  struct Case {
    const char* command;
    const char* type;
    std::vector<std::string> notOptions;  // keys that have no meaning on files
  };
  for (const Case& c :
       {Case{"stereo", "stereo_sgm", {"confidence", "calibration", "baseline_focal"}}, Case{"faces", "face_detect", {}},
        Case{"dof", "dof", {"focus"}}, Case{"demosaic", "demosaic", {}},
        Case{"synth", "polar_synth", {"picture", "frames", "variants", "aolp_step_deg"}}}) {
    Child types = spawn({binary(), "types", c.type}, dir);
    ASSERT_EQ(waitFor(types, std::chrono::seconds(10)), 0) << slurp(types.err);
    std::string typesText = slurp(types.out);  // read before the next child writes its own
    Child help = spawn({binary(), c.command, "--help"}, dir);
    ASSERT_EQ(waitFor(help, std::chrono::seconds(10)), 0) << slurp(help.err);
    std::string helpText = slurp(help.out);
    // `types` prints "    key: help" (help may go on over lines indented further) then
    // "        allowed; default value".
    auto indent = [](const std::string& line) { return line.find_first_not_of(' '); };
    std::istringstream lines(typesText);
    int keys = 0;
    for (std::string line, next; std::getline(lines, line);) {
      if (indent(line) != 4 || line.find(':') == std::string::npos) continue;
      std::string key = line.substr(4, line.find(':') - 4);
      while (std::getline(lines, next) && indent(next) != 8) {
      }
      if (std::find(c.notOptions.begin(), c.notOptions.end(), key) != c.notOptions.end()) continue;
      ++keys;
      std::string option = "--" + key;
      std::replace(option.begin(), option.end(), '_', '-');
      EXPECT_NE(helpText.find(option), std::string::npos) << c.command << " lacks " << option << ":\n" << helpText;
      std::string allowed = next.substr(8, next.rfind("; default") - 8);
      if (allowed != "true or false") {
        EXPECT_NE(helpText.find("(" + allowed + ")"), std::string::npos)
            << c.command << " " << option << " should allow " << allowed << ":\n"
            << helpText;
      }
    }
    EXPECT_GE(keys, 4) << c.type << "'s parameters were not found in:\n" << typesText;
  }

  std::string data = (test::sourceDir() / "tests/data/stereo/").string();
  Child cli = spawn({binary(), "stereo", data + "chessboard/left/01.jpg", data + "chessboard/right/01.jpg", "--p2",
                     "225", "--out", dir / "x.pfm"},
                    dir);
  EXPECT_EQ(waitFor(cli, std::chrono::seconds(10)), 2);
  std::string cliErr = slurp(cli.err);
  EXPECT_NE(cliErr.find("--p2"), std::string::npos) << cliErr;
  // (Building the demo's graph renders its source's 36 frames: 3 s, 27 s under the sanitizers on 2 cores.)
  Child yaml =
      spawn({binary(), "validate", test::sourceDir() / "config/demo.yaml", "--set", "stages.sgm.params.p2=225"}, dir);
  EXPECT_EQ(waitFor(yaml, std::chrono::seconds(120)), 2);
  for (const std::string& err : {cliErr, slurp(yaml.err)})
    EXPECT_NE(err.find("expected an integer in [0, 224], got '225'"), std::string::npos) << err;
}

// Faces in a picture as JSON lines; a broken cascade and a picture smaller than the window.
TEST(Cli, FacesOnFilesAndItsErrors) {
  test::TempDir dir;
  std::string cascade = test::dataFile("cascades/haarcascade_frontalface_default.xml");
  Child ok = spawn({binary(), "faces", test::picture("messi5.jpg"), "--cascade", cascade, "--backend", "cpu"}, dir);
  ASSERT_EQ(waitFor(ok, std::chrono::seconds(60)), 0) << slurp(ok.err);
  std::istringstream lines(slurp(ok.out));
  std::string line;
  int faces = 0;
  while (std::getline(lines, line)) {
    ++faces;
    for (const char* key : {"\"x\":", "\"y\":", "\"w\":", "\"h\":", "\"neighbors\":"})
      EXPECT_NE(line.find(key), std::string::npos) << line;
  }
  EXPECT_GE(faces, 1);

  writeImage(dir / "tiny.png", test::randomImage({Depth::u8, 1}, 16, 16));
  Child tiny = spawn({binary(), "faces", dir / "tiny.png", "--cascade", cascade, "--backend", "cpu"}, dir);
  EXPECT_EQ(waitFor(tiny, std::chrono::seconds(10)), 0) << slurp(tiny.err);
  EXPECT_EQ(slurp(tiny.out), "");

  std::ofstream(dir / "broken.xml") << "<opencv_storage><cascade><stageType>BOOST</stageType>";
  Child broken = spawn({binary(), "faces", test::picture("messi5.jpg"), "--cascade", dir / "broken.xml"}, dir);
  EXPECT_EQ(waitFor(broken, std::chrono::seconds(10)), 2);
  EXPECT_NE(slurp(broken.err).find("broken.xml: not readable XML"), std::string::npos) << slurp(broken.err);
}

}  // namespace
}  // namespace pp
