// Stereo on the CPU reference: the Aloe accuracy goal, a known shift, the calibration reader's
// errors, and a rectify -> stereo_sgm graph from YAML.
#include <fstream>

#include "stages/register.hpp"
#include "stages/stereo/calibration.hpp"
#include "stages/stereo/sgm.hpp"
#include "tests/graph_support.hpp"
#include "tests/stereo_support.hpp"

namespace pp::stereo {
namespace {

// Middlebury's Aloe (1282x1110, disparities up to 211) with 256 disparities and 8 paths, the
// defaults otherwise. Goal: bad-2.0 <= 17% with density >= 85% (libSGM 3.1: 19.3% at 84.3%).
TEST(SgmCpu, AloeMeetsTheAccuracyGoal) {
  Image left = readGreyImage(test::stereoData("aloeL.jpg")), right = readGreyImage(test::stereoData("aloeR.jpg"));
  Image truth = readImage(test::stereoData("aloeGT.png"));
  SgmParams p;
  p.disparities = 256;
  Image disparity({Depth::u16, 1}, left.width(), left.height(), MemoryKind::host);
  sgmCpu(p, left, right, disparity);
  test::StereoScore s = test::scoreAgainst(disparity, truth);
  RecordProperty("density", std::to_string(s.density));
  RecordProperty("bad2", std::to_string(s.bad2));
  EXPECT_GE(s.density, 85.0);
  EXPECT_LE(s.bad2, 17.0);
}

// A shift of 9 pixels (with min_disparity 4, candidate 5): every checked pixel away from the left
// edge comes out at 9, the sub-pixel offset within half a pixel.
TEST(SgmCpu, FindsAKnownShift) {
  for (int minDisparity : {0, 4}) {
    auto [left, right] = test::shiftedPair(97, 61, 9);
    SgmParams p;
    p.disparities = 64;
    p.minDisparity = minDisparity;
    p.fill = false;
    Image disparity({Depth::u16, 1}, 97, 61, MemoryKind::host), confidence({Depth::u8, 1}, 97, 61, MemoryKind::host);
    sgmCpu(p, left, right, disparity, &confidence);
    int checked = 0, right9 = 0;
    for (int y = 4; y < 57; ++y)
      for (int x = 24; x < 93; ++x) {
        uint16_t d = disparity.view<uint16_t>().at(x, y);
        ++checked;
        right9 += d != kInvalidDisparity && std::abs(d - 9 * 16) <= 8;
        if (d != kInvalidDisparity) {
          EXPECT_GT(confidence.view<uint8_t>().at(x, y), 0) << x << "," << y;
        }
      }
    EXPECT_GE(right9, checked * 98 / 100) << "min_disparity " << minDisparity;
  }
}

TEST(SgmCpu, DepthFollowsQ) {
  Image disparity({Depth::u16, 1}, 3, 1, MemoryKind::host), depth({Depth::f32, 1}, 3, 1, MemoryKind::host);
  disparity.view<uint16_t>().at(0, 0) = 10 * 16;
  disparity.view<uint16_t>().at(1, 0) = kInvalidDisparity;
  disparity.view<uint16_t>().at(2, 0) = 0;
  depthCpu(disparity, {500.f, 0.1f, 0.f}, depth);
  EXPECT_FLOAT_EQ(depth.view<float>().at(0, 0), 500.f);  // 500 / (0.1 * 10)
  EXPECT_TRUE(std::isinf(depth.view<float>().at(1, 0)));
  EXPECT_TRUE(std::isinf(depth.view<float>().at(2, 0)));  // at infinity
}

// `sweeps` names its three choices in YAML and on the command line; `true` and `false` as before
// `auto` came, `auto` the default.
TEST(SgmParamsSchema, SweepsAreAutoTrueOrFalse) {
  const ParamSchema<SgmParams>& schema = sgmParamSchema();
  auto parse = [&](const std::string& yaml, Diagnostics& d) {
    ParamContext ctx{d, "stages.sgm.params", "", YAML::Load(yaml)};
    return schema.parse(ctx);
  };
  for (auto [text, want] : {std::pair{"auto", Sweeps::automatic}, {"true", Sweeps::on}, {"false", Sweeps::off}}) {
    Diagnostics d("test.yaml");
    EXPECT_EQ(parse(std::string("{sweeps: ") + text + "}", d).sweeps, want) << text;
    EXPECT_TRUE(d.empty()) << d.text();
    SgmParams p;
    std::string problem;
    EXPECT_TRUE(schema.setText("sweeps", text, p, problem)) << problem;
    EXPECT_EQ(p.sweeps, want) << text;
    EXPECT_EQ(schema.valueText("sweeps", p), text);
  }
  EXPECT_EQ(SgmParams{}.sweeps, Sweeps::automatic);
  EXPECT_NE(schema.help().find("default auto"), std::string::npos) << schema.help();
  Diagnostics bad("test.yaml");
  EXPECT_EQ(parse("{paths: 8, sweeps: [on]}", bad).sweeps, Sweeps::automatic);  // refused: the default kept
  EXPECT_NE(bad.text().find("stages.sgm.params.sweeps"), std::string::npos) << bad.text();
  EXPECT_NE(bad.text().find("auto, true, false"), std::string::npos) << bad.text();
  SgmParams p;
  std::string problem;
  EXPECT_FALSE(schema.setText("sweeps", "sometimes", p, problem));
  EXPECT_NE(problem.find("'sometimes'"), std::string::npos) << problem;
}

TEST(SgmParamsCheck, NamesTheBadParameter) {
  auto message = [](SgmParams p) {
    try {
      checkParams(p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  SgmParams p;
  p.disparities = 100;
  EXPECT_NE(message(p).find("disparities must be 64, 128 or 256, not 100"), std::string::npos);
  p = {};
  p.p2 = 240;
  EXPECT_NE(message(p).find("p2"), std::string::npos);
  p = {};
  p.paths = 6;
  EXPECT_NE(message(p).find("paths"), std::string::npos);
  EXPECT_EQ(message(SgmParams{}), "");
  // The one bound on min_disparity: with the fewest disparities the sum stays below kDisparityLimit.
  p = {};
  p.disparities = 64, p.minDisparity = kMaxMinDisparity;
  EXPECT_EQ(message(p), "");
  p.minDisparity = kMaxMinDisparity + 1;
  EXPECT_NE(message(p).find("min_disparity must be in 0..4031"), std::string::npos) << message(p);
}

// --- calibration ---

std::string calibrationError(const std::string& text) {
  test::TempDir dir;
  std::ofstream(dir / "c.yml") << text;
  try {
    loadCalibration(dir / "c.yml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The shipped file written by OpenCV, and the same numbers as plain YAML lists.
std::string plainCalibration(const StereoCalibration& c, const std::string& skip = "") {
  auto list = [](const auto& values) {
    std::string s = "[";
    for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
    return s + "]";
  };
  std::map<std::string, std::string> keys = {
      {"M1", list(c.left.m)},  {"D1", list(c.left.d)},     {"M2", list(c.right.m)}, {"D2", list(c.right.d)},
      {"R", list(c.rotation)}, {"T", list(c.translation)}, {"R1", list(c.left.r)},  {"R2", list(c.right.r)},
      {"P1", list(c.left.p)},  {"P2", list(c.right.p)},    {"Q", list(c.q)}};
  std::string text;
  for (const auto& [k, v] : keys)
    if (k != skip) text += k + ": " + v + "\n";
  return text;
}

TEST(Calibration, ReadsOpenCvFileStorageAndPlainYaml) {
  StereoCalibration c = loadCalibration(test::stereoData("chessboard-calibration.yml"));
  EXPECT_EQ(c.width, 640);
  EXPECT_EQ(c.height, 480);
  EXPECT_NEAR(c.left.m[0], 534.0, 1.0);  // fx
  EXPECT_EQ(c.left.d.size(), 8u);
  EXPECT_GT(c.q[14], 0);
  test::TempDir dir;
  std::ofstream(dir / "plain.yaml") << plainCalibration(c);
  StereoCalibration plain = loadCalibration(dir / "plain.yaml");
  for (int i = 0; i < 12; ++i)
    EXPECT_NEAR(plain.right.p[i], c.right.p[i], 1e-4 * std::max(1.0, std::fabs(c.right.p[i])));
  EXPECT_EQ(plain.width, 0);  // not recorded: any size
}

TEST(Calibration, ErrorsNameTheFileAndKey) {
  StereoCalibration c = loadCalibration(test::stereoData("chessboard-calibration.yml"));
  EXPECT_NE(calibrationError(plainCalibration(c, "P2")).find("missing key P2"), std::string::npos);
  std::string text = plainCalibration(c, "M1") + "M1: [1, 2, 3]\n";
  EXPECT_NE(calibrationError(text).find("M1 has 3 values; a 3x3 matrix has 9"), std::string::npos);
  text = plainCalibration(c, "D1") + "D1: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1]\n";
  EXPECT_NE(calibrationError(text).find("D1 has a non-zero thin-prism or tilt coefficient"), std::string::npos);
  text = plainCalibration(c, "Q") + "Q: {rows: 4, cols: 4, dt: d, data: [1, 2]}\n";
  EXPECT_NE(calibrationError(text).find("Q has 2 values for 4x4"), std::string::npos);
  // rows x cols that overflow an int (UBSan once caught the product) and a camera matrix of zeros.
  text = plainCalibration(c, "Q") + "Q: {rows: 2000000000, cols: 2000000000, dt: d, data: [1, 2]}\n";
  EXPECT_NE(
      calibrationError(text).find("Q is 2000000000x2000000000; a calibration matrix has 1 to 64 rows and columns"),
      std::string::npos)
      << calibrationError(text);
  text = plainCalibration(c, "M2") + "M2: [0, 0, 0, 0, 0, 0, 0, 0, 0]\n";
  EXPECT_NE(calibrationError(text).find("M2 has focal lengths fx 0.000000, fy 0.000000; both must be > 0"),
            std::string::npos)
      << calibrationError(text);
  text = plainCalibration(c, "M1") + "M1: [500, 0, 320, 0, 500, 240, 0, 0, 0]\n";
  EXPECT_NE(calibrationError(text).find("M1's last row must be 0 0 1"), std::string::npos) << calibrationError(text);
  EXPECT_NE(calibrationError("M1: [unclosed").find("not YAML"), std::string::npos);
  EXPECT_NE(calibrationError("just text").find("expected a map"), std::string::npos);
  try {
    checkCalibrationSize(c, 1280, 960);
    ADD_FAILURE() << "size mismatch accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is for 640x480 images, not 1280x960"), std::string::npos);
  }
}

TEST(Rectify, IdentityCalibrationLeavesThePictureAlone) {
  Camera identity{{500, 0, 40, 0, 500, 30, 0, 0, 1},
                  {0, 0, 0, 0},
                  {1, 0, 0, 0, 1, 0, 0, 0, 1},
                  {500, 0, 40, 0, 0, 500, 30, 0, 0, 0, 1, 0}};
  Image picture = test::randomImage({Depth::u8, 3}, 81, 59), out({Depth::u8, 3}, 81, 59, MemoryKind::host);
  remapCpu(picture, rectifyMap(identity, 81, 59), out);
  EXPECT_TRUE(test::samePixels(picture, out));
}

// --- the graph ---

TEST(StereoGraph, RectifiesAndMatchesFromYaml) {
  Registry registry;
  registerAllNodes(registry);
  registry.add<KeepSink>(Role::sink, "keep", "keeps frames");
  std::string data = test::stereoData("");
  std::string yaml =
      "sources:\n  - {name: pair, type: images, params: {left: " + data + "chessboard/left, right: " + data +
      "chessboard/right, grey: true}}\n" +
      "stages:\n  - {name: rect, type: rectify, inputs: {left: pair.left, right: pair.right}, params: {calibration: " +
      data + "chessboard-calibration.yml}}\n" +
      "  - {name: sgm, type: stereo_sgm, inputs: {left: rect.left, right: rect.right}, params: {disparities: 64, "
      "calibration: " +
      data + "chessboard-calibration.yml, confidence: true}}\n" +
      "sinks:\n  - {name: keep, type: keep, inputs: {d: sgm.disparity, z: sgm.depth, c: sgm.confidence}}\n";
  auto graph = buildGraph(registry, yaml);
  ASSERT_TRUE(graph);
  graph->run();
  ASSERT_EQ(kept("default").count(), 1u);
  const Image& disparity = kept("default").planes[0].at("d");
  ASSERT_EQ(disparity.width(), 640);
  size_t valid = 0;
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x) valid += disparity.view<uint16_t>().at(x, y) != kInvalidDisparity;
  EXPECT_GT(valid, 640u * 480u * 9 / 10);
  EXPECT_EQ(kept("default").planes[0].at("z").format(), (Format{Depth::f32, 1}));
  EXPECT_EQ(kept("default").planes[0].at("c").format(), (Format{Depth::u8, 1}));
}

TEST(StereoGraph, ConfigErrorsNameTheProblem) {
  Registry registry;
  registerAllNodes(registry);
  registry.add<KeepSink>(Role::sink, "keep", "keeps frames");
  std::string data = test::stereoData("");
  std::string yaml = "sources:\n  - {name: pair, type: images, params: {left: " + data +
                     "chessboard/left, right: " + data + "chessboard/right}}\n" +
                     "stages:\n  - {name: sgm, type: stereo_sgm, inputs: {left: pair.left, right: pair.right}, params: "
                     "{disparities: 96, p2: 250}}\n" +
                     "sinks:\n  - {name: keep, type: keep, inputs: {d: sgm.disparity}}\n";
  Diagnostics d("test.yaml");
  EXPECT_FALSE(buildGraph(registry, yaml, d));
  EXPECT_NE(d.text().find("disparities"), std::string::npos) << d.text();
  EXPECT_NE(d.text().find("p2"), std::string::npos) << d.text();
  // The YAML schema's bound on min_disparity is checkParams' (it was 3800 here, 4096 there).
  Diagnostics far("test.yaml");
  std::string tooFar = yaml;
  tooFar.replace(tooFar.find("{disparities: 96, p2: 250}"), std::string("{disparities: 96, p2: 250}").size(),
                 "{min_disparity: 4032}");
  EXPECT_FALSE(buildGraph(registry, tooFar, far));
  EXPECT_NE(far.text().find("min_disparity"), std::string::npos) << far.text();
  EXPECT_NE(far.text().find("4031"), std::string::npos) << far.text();
}

// --- the demo's source ---

// stereo_synth makes every frame before a graph that runs starts (so that a paced source keeps its
// rate), the overlay moving and the AoLP field turning from frame to frame; a graph built to
// validate makes the first alone, for its outputs' size.
TEST(StereoSynth, RunsEveryFrameAndValidateNamesTheirSize) {
  Registry registry;
  registerAllNodes(registry);
  registry.add<KeepSink>(Role::sink, "keep", "keeps frames");
  const std::string data = test::stereoData("");
  const std::string yaml = "sources:\n  - {name: cams, type: stereo_synth, params: {left: " + data +
                           "chessboard/left/01.jpg, right: " + data +
                           "chessboard/right/01.jpg, downscale: 4, overlay: " + data +
                           "aloeL.jpg, overlay_crop: [0, 0, 40, 30], overlay_at: [20, 10], " +
                           "overlay_disparity: 12, overlay_step: [5, 2], frames: 3}}\n" +
                           "sinks:\n  - {name: keep, type: keep, inputs: {l: cams.left, r: cams.right}}\n";
  auto graph = buildGraph(registry, yaml);
  ASSERT_TRUE(graph);
  graph->run();
  Kept& k = kept("default");
  ASSERT_EQ(k.count(), 3u);
  const Image& first = k.planes[0].at("l");
  EXPECT_EQ(first.width(), 2 * 640 / 4);  // a raw mosaic: each picture pixel a 2x2 block
  EXPECT_EQ(first.height(), 2 * 480 / 4);
  // (The validate build below makes a new keep sink, which clears what was kept.)
  const std::string size = std::to_string(first.width()) + "x" + std::to_string(first.height());
  EXPECT_EQ(k.metas[0].mosaic, "polar_mono");
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_FALSE(test::samePixels(k.planes[i].at("l"), k.planes[i - 1].at("l"))) << "frame " << i;
    EXPECT_FALSE(test::samePixels(k.planes[i].at("r"), k.planes[i - 1].at("r"))) << "frame " << i;
  }

  Diagnostics d("test.yaml");
  const PipelineSpec spec = parsePipeline(yaml, "test.yaml", {}, d);
  GraphOptions validate;
  validate.devices = PortSetup::Devices::none;
  auto described = Graph::build(spec, registry, d, validate);
  ASSERT_TRUE(described) << d.text();
  EXPECT_NE(described->describe().find(size), std::string::npos) << described->describe();
}

}  // namespace
}  // namespace pp::stereo
