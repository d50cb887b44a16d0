// Broken configs: every error names file:line:column, the key path and what is allowed.
#include <fstream>
#include <regex>

#include "pipeline/graph.hpp"
#include "pipeline/image_io.hpp"
#include "stages/register.hpp"
#include "tests/support.hpp"

namespace pp {
namespace {

struct BrokenConfig {
  const char* what;
  const char* yaml;  // {DIR} is replaced by a folder holding two images
  int line;          // 1-based line the error must point at (0: none, e.g. --set)
  const char* keyPath;
  const char* message;  // a part of the message
  std::vector<std::string> overrides = {};
};

class ConfigErrors : public ::testing::TestWithParam<BrokenConfig> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    writeImage(*dir_ / "a.png", test::randomImage({Depth::u8, 1}, 16, 8));
    writeImage(*dir_ / "b.png", test::randomImage({Depth::u8, 1}, 16, 8));
    std::filesystem::create_directory(dir_->path() / "big");
    writeImage(*dir_ / "big/c.png", test::randomImage({Depth::u8, 1}, 32, 8));
  }
  static void TearDownTestSuite() { delete dir_; }
  static test::TempDir* dir_;
};
test::TempDir* ConfigErrors::dir_ = nullptr;

std::vector<Diagnostic> diagnose(const std::string& file, const std::string& text,
                                 const std::vector<std::string>& overrides) {
  std::ofstream(file) << text;
  Registry registry;
  registerAllNodes(registry);
  Diagnostics d(file);
  PipelineSpec spec = loadPipeline(file, overrides, d);
  Graph::build(spec, registry, d, {"cpu"});
  return d.errors();
}

TEST_P(ConfigErrors, NamesTheLineTheKeyAndWhatIsAllowed) {
  const BrokenConfig& c = GetParam();
  std::string text = std::regex_replace(c.yaml, std::regex("\\{DIR\\}"), dir_->path().string());
  std::string file = *dir_ / "broken.yaml";
  auto errors = diagnose(file, text, c.overrides);
  ASSERT_FALSE(errors.empty()) << c.what << ": accepted";
  std::string all;
  for (const auto& e : errors) all += e.text() + "\n";
  bool found = false;
  for (const auto& e : errors) {
    bool located = c.line == 0 ? e.location.rfind("--set ", 0) == 0
                               : e.location.rfind(file + ":" + std::to_string(c.line) + ":", 0) == 0;
    if (located && e.keyPath == c.keyPath && e.message.find(c.message) != std::string::npos) found = true;
  }
  EXPECT_TRUE(found) << c.what << ": expected line " << c.line << ", key " << c.keyPath << ", message containing '"
                     << c.message << "'; got:\n"
                     << all;
}

std::string caseName(const ::testing::TestParamInfo<BrokenConfig>& info) {
  std::string name = info.param.what;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

const char* kGood = R"(sources:
  - {name: cam, type: images, params: {path: "{DIR}/*.png"}}
stages:
  - {name: view, type: compose, inputs: {a: cam.image}}
sinks:
  - {name: out, type: image_writer, inputs: {v: view.image}, params: {dir: "{DIR}/out"}}
)";

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigErrors,
    ::testing::Values(
        BrokenConfig{"unknown top-level key", "stagse: []\nsources: []\n", 1, "stagse", "did you mean 'stages'?"},
        BrokenConfig{"frames_in_flight out of range", "pipeline:\n  frames_in_flight: 0\nsources: []\n", 2,
                     "pipeline.frames_in_flight", "an integer in [1, 16]"},
        BrokenConfig{"unknown backend", "pipeline: {backend: gpu}\n", 1, "pipeline.backend", "one of: auto, cuda, cpu"},
        BrokenConfig{"metrics port out of range", "metrics:\n  port: 70000\n", 2, "metrics.port",
                     "an integer in [0, 65535]"},
        BrokenConfig{"YAML syntax", "sources:\n  - {name: cam, type: images\n", 3, "", "YAML syntax error"},
        BrokenConfig{"no sources", "stages: []\n", 1, "sources", "at least one source"},
        BrokenConfig{"unknown source type", "sources:\n  - name: cam\n    type: imagez\n", 3, "sources.cam.type",
                     "did you mean 'images'?"},
        BrokenConfig{"missing name", "sources:\n  - type: images\n", 2, "sources[0].name", "needs a name"},
        BrokenConfig{"bad name", "sources:\n  - {name: 'a.b', type: images}\n", 2, "sources[0].name",
                     "not a valid name"},
        BrokenConfig{"duplicate name",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\n  - {name: cam, type: images, "
                     "params: {path: '{DIR}'}}\n",
                     3, "sources.cam.name", "used twice"},
        BrokenConfig{"unknown node key", "sources:\n  - {name: cam, type: images, parms: {}}\n", 2, "sources.cam.parms",
                     "did you mean 'params'?"},
        BrokenConfig{"unknown param",
                     "sources:\n  - name: cam\n    type: images\n    params:\n      path: '{DIR}'\n      lop: true\n",
                     6, "sources.cam.params.lop", "did you mean 'loop'?"},
        BrokenConfig{"param of the wrong type",
                     "sources:\n  - name: cam\n    type: images\n    params:\n      path: '{DIR}'\n      fps: fast\n",
                     6, "sources.cam.params.fps", "a number in [0, 10000], got 'fast'"},
        BrokenConfig{"no files at the path",
                     "sources:\n  - name: cam\n    type: images\n    params:\n      path: '{DIR}/nothing/*.png'\n", 5,
                     "sources.cam.params.path", "no image files"},
        BrokenConfig{"list param with an unknown value",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs: {a: cam.image}\n    params: {colormaps: [jet]}\n",
                     7, "stages.v.params.colormaps", "none, gray, turbo, hsv"},
        BrokenConfig{"input from an unknown node",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs:\n      a: cma.image\n",
                     7, "stages.v.inputs.a", "did you mean 'cam'?"},
        BrokenConfig{"input not node.port",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs:\n      a: camimage\n",
                     7, "stages.v.inputs.a", "expected 'node.port'"},
        BrokenConfig{"unknown output port",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs:\n      a: cam.img\n",
                     7, "stages.v.inputs.a", "has no output 'img'; did you mean 'image'?"},
        BrokenConfig{"input the stage does not have",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs:\n      a: cam.image\n      z: cam.image\n",
                     8, "stages.v.inputs.z", "'compose' has no input 'z'"},
        BrokenConfig{"required input missing",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n",
                     4, "stages.v", "input 'a' is not connected"},
        BrokenConfig{
            "cycle",
            "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: s1\n    type: "
            "compose\n    inputs: {a: s2.image}\n  - name: s2\n    type: compose\n    inputs: {a: s1.image}\n",
            9, "stages.s2.inputs.a", "cycle: s1 -> s2 -> s1"},
        BrokenConfig{"reading from a sink",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: v\n    "
                     "type: compose\n    inputs: {a: out.image}\nsinks:\n  - {name: out, type: image_writer, inputs: "
                     "{x: cam.image}, params: {dir: '{DIR}/o'}}\n",
                     6, "stages.v.inputs.a", "is a sink"},
        BrokenConfig{"mismatched sizes between connected ports",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}/*.png'}}\n  - {name: big, type: "
                     "images, params: {path: '{DIR}/big'}}\nstages:\n  - name: v\n    type: compose\n    inputs: {a: "
                     "cam.image, b: big.image}\n    params: {layout: side_by_side}\n",
                     5, "stages.v", "all tiles must have one size"},
        BrokenConfig{"mismatched formats between connected ports",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}/*.png'}}\nstages:\n  - name: v\n   "
                     " type: compose\n    inputs: {a: cam.image}\n  - name: w\n    type: compose\n    inputs: {a: "
                     "v.image}\n    params: {colormaps: [turbo]}\n",
                     7, "stages.w", "colour maps need a single-channel plane"},
        BrokenConfig{"detections wanted, image given",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}/*.png'}}\nstages:\n  - name: v\n   "
                     " type: compose\n    inputs: {a: cam.image, boxes: cam.image}\n",
                     4, "stages.v", "must be detections"},
        BrokenConfig{"NaN in a number",
                     "sources:\n  - name: cam\n    type: images\n    params:\n      path: '{DIR}'\n      fps: .nan\n",
                     6, "sources.cam.params.fps", "a number in [0, 10000], got '.nan'"},
        BrokenConfig{"a list value that is not allowed is named",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: p\n    "
                     "type: demosaic\n    inputs: {raw: cam.image}\n    params: {outputs: [s0, dolpp]}\n",
                     7, "stages.p.params.outputs", "got [s0, dolpp]: 'dolpp' is not one of them; did you mean 'dolp'?"},
        BrokenConfig{"a list value given twice is named",
                     "sources:\n  - {name: cam, type: images, params: {path: '{DIR}'}}\nstages:\n  - name: p\n    "
                     "type: demosaic\n    inputs: {raw: cam.image}\n    params: {outputs: [s0, dolp, s0]}\n",
                     7, "stages.p.params.outputs", "'s0' comes twice"},
        BrokenConfig{"--set infinity",
                     kGood,
                     0,
                     "sources.cam.params.fps",
                     "a number in [0, 10000], got '.inf'",
                     {"sources.cam.params.fps=.inf"}},
        BrokenConfig{"--set out of range",
                     kGood,
                     0,
                     "sources.cam.params.fps",
                     "a number in [0, 10000]",
                     {"sources.cam.params.fps=-3"}},
        BrokenConfig{"--set on a node that does not exist",
                     kGood,
                     0,
                     "stages.viw",
                     "no node named 'viw'",
                     {"stages.viw.params.layout=grid2x2"}}),
    caseName);

TEST(ConfigErrorsAtOnce, EveryErrorIsReportedInOnePass) {
  test::TempDir dir;
  std::string file = dir / "many.yaml";
  auto errors = diagnose(
      file,
      "pipeline: {frames_in_flight: 99, backend: gpu}\nmetrics: {port: -1}\nsources:\n  - {name: cam, type: nope}\n",
      {});
  EXPECT_EQ(errors.size(), 4u);
}

// A node's wiring to a node with errors cannot be checked (its outputs are unknown): the report
// says which nodes were left unchecked rather than passing over them in silence.
TEST(ConfigErrorsAtOnce, NodesLeftUncheckedByAnErrorUpstreamAreNamed) {
  test::TempDir dir;
  writeImage(dir / "a.png", test::randomImage({Depth::u8, 1}, 16, 8));
  std::string file = dir / "p.yaml";
  std::ofstream(file)
      << "sources:\n  - {name: cam, type: images, params: {path: '" << dir.path().string()
      << "'}}\nstages:\n  - {name: polar, type: demosaic, inputs: {raw: cam.image}, params: {outputs: [s0, dolpp]}}\n"
         "  - {name: view, type: compose, inputs: {a: polar.dolp}}\n"
         "sinks:\n  - {name: out, type: image_writer, inputs: {v: view.imag}, params: {dir: o}}\n";
  Registry registry;
  registerAllNodes(registry);
  Diagnostics d(file);
  PipelineSpec spec = loadPipeline(file, {}, d);
  EXPECT_FALSE(Graph::build(spec, registry, d, {"cpu"}));
  ASSERT_EQ(d.size(), 1u) << d.text();
  ASSERT_EQ(d.notes().size(), 1u);
  EXPECT_EQ(d.notes()[0],
            "not checked, since they read from nodes with errors or not checked: view (reads polar); out (reads view)");
}

TEST(ConfigErrorsAtOnce, AMissingFileIsNamed) {
  Diagnostics d("/nonexistent/p.yaml");
  loadPipeline("/nonexistent/p.yaml", {}, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d.text().find("/nonexistent/p.yaml: cannot open the config file"), std::string::npos) << d.text();
}

// A file far larger than any config (a recording or a generated list passed by mistake) is refused
// before yaml-cpp spends seconds and gigabytes on it.
TEST(ConfigErrorsAtOnce, AnOversizedFileIsRefusedBeforeParsing) {
  test::TempDir dir;
  std::string file = dir / "huge.yaml";
  {
    std::ofstream out(file);
    out << "sources:\n  - {name: cam, type: images, params: {path: x, region: [";
    for (uintmax_t written = 0; written <= kMaxConfigBytes; written += 2) out << "1,";
    out << "1]}}\n";
  }
  Diagnostics d(file);
  loadPipeline(file, {}, d);
  ASSERT_EQ(d.size(), 1u) << d.text();
  EXPECT_NE(d.text().find("a pipeline config is at most " + std::to_string(kMaxConfigBytes)), std::string::npos)
      << d.text();
}

TEST(ConfigOverrides, SetChangesAValueWithTheSameChecks) {
  test::TempDir dir;
  writeImage(dir / "a.png", test::randomImage({Depth::u8, 1}, 16, 8));
  std::string text = std::regex_replace(kGood, std::regex("\\{DIR\\}"), dir.path().string());
  std::string file = dir / "p.yaml";
  std::ofstream(file) << text;
  Diagnostics d(file);
  PipelineSpec spec = loadPipeline(
      file, {"pipeline.frames_in_flight=5", "stages.view.params.layout=side_by_side", "stages.view.inputs.b=cam.image"},
      d);
  ASSERT_TRUE(d.empty()) << d.text();
  EXPECT_EQ(spec.pipeline.framesInFlight, 5);
  Registry registry;
  registerAllNodes(registry);
  auto graph = Graph::build(spec, registry, d, {"cpu"});
  ASSERT_TRUE(graph) << d.text();
  EXPECT_NE(graph->describe().find("u8x3 32x8"), std::string::npos) << graph->describe();  // two tiles side by side
}

// A parameter given as text (a command line's value) goes through the schema's own rule; a schema
// included from a base struct keeps its keys, checks and defaults.
TEST(ParamText, ValuesAsTextAreCheckedByTheSameRules) {
  struct Base {
    int level = 3;
    bool sharp = true;
  };
  struct Params : Base {
    std::vector<std::string> outputs = {"a"};
  };
  static const auto base =
      ParamSchema<Base>().add("level", &Base::level, "how much", intIn(0, 10)).add("sharp", &Base::sharp, "sharpen");
  static const auto schema =
      ParamSchema<Params>().include(base).add("outputs", &Params::outputs, "planes", listOf({"a", "b", "c"}));
  Params p;
  std::string problem;
  EXPECT_EQ(schema.keys(), (std::vector<std::string>{"level", "sharp", "outputs"}));
  EXPECT_TRUE(schema.setText("level", "7", p, problem)) << problem;
  EXPECT_TRUE(schema.setText("sharp", "false", p, problem)) << problem;
  EXPECT_TRUE(schema.setText("outputs", "c,a", p, problem)) << problem;
  EXPECT_EQ(p.level, 7);
  EXPECT_FALSE(p.sharp);
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"c", "a"}));

  EXPECT_FALSE(schema.setText("level", "11", p, problem));
  EXPECT_EQ(problem, "expected an integer in [0, 10], got '11'");
  EXPECT_FALSE(schema.setText("level", "seven", p, problem));
  EXPECT_EQ(problem, "expected an integer in [0, 10], got 'seven'");
  EXPECT_FALSE(schema.setText("outputs", "a,d", p, problem));
  EXPECT_NE(problem.find("'d' is not one of them"), std::string::npos) << problem;
  EXPECT_FALSE(schema.setText("depth", "1", p, problem));
  EXPECT_EQ(p.level, 7) << "a refused value leaves the one before";
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"c", "a"}));

  std::vector<std::string> flags, lists;
  for (const auto& o : schema.options()) {
    if (o.flag) flags.push_back(o.key);
    if (o.list) lists.push_back(o.key);
  }
  EXPECT_EQ(flags, std::vector<std::string>{"sharp"});
  EXPECT_EQ(lists, std::vector<std::string>{"outputs"});
  EXPECT_EQ(schema.valueText("level", Params{}), "3");
}

}  // namespace
}  // namespace pp
