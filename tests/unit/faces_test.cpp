// face_detect without OpenCV: the cascade reader's errors, small pictures, grouping, and a graph
// from YAML writing detections as JSON lines.
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "pipeline/image_io.hpp"
#include "stages/faces/faces.hpp"
#include "stages/register.hpp"
#include "tests/graph_support.hpp"

namespace pp::faces {
namespace {

std::string cascadeText() {
  std::ifstream in(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string loadError(const std::string& text) {
  test::TempDir dir;
  std::ofstream(dir / "c.xml") << text;
  try {
    loadCascade(dir / "c.xml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Cascade, ReadsOpenCvsFrontalFace) {
  Cascade c = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  EXPECT_EQ(c.width, 24);
  EXPECT_EQ(c.height, 24);
  EXPECT_EQ(c.stages.size(), 25u);
  EXPECT_EQ(c.stumps.size(), 2913u);
  EXPECT_EQ(c.stages[0].count, 9);
}

TEST(Cascade, BadFilesSayWhatIsWrong) {
  std::string text = cascadeText();
  EXPECT_NE(loadError(text.substr(0, text.size() / 2)).find("not readable XML"), std::string::npos) << "truncated";
  EXPECT_NE(loadError("<opencv_storage><cascade><stageType>BOOST</stageType><featureType>LBP</featureType></cascade></"
                      "opencv_storage>")
                .find("featureType LBP"),
            std::string::npos);
  EXPECT_NE(loadError(std::regex_replace(text, std::regex("<stageNum>25</stageNum>"), "<stageNum>26</stageNum>"))
                .find("stageNum says 26 stages but the file has 25"),
            std::string::npos);
  std::string tilted = std::regex_replace(text, std::regex("</rects></_>"), "</rects>\n      <tilted>1</tilted></_>",
                                          std::regex_constants::format_first_only);
  EXPECT_NE(loadError(tilted).find("feature 0 is tilted"), std::string::npos);
  std::string garbled = std::regex_replace(text, std::regex("<stageThreshold>[^<]*"), "<stageThreshold>banana",
                                           std::regex_constants::format_first_only);
  EXPECT_NE(loadError(garbled).find("stage 0 holds something that is not a number"), std::string::npos)
      << loadError(garbled);
  EXPECT_NE(loadError("<html/>").find("no <opencv_storage>"), std::string::npos);
}

TEST(FacesCpu, APictureSmallerThanTheWindowHasNoFaces) {
  Cascade c = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  EXPECT_TRUE(detectCpu(c, test::randomImage({Depth::u8, 1}, 20, 30), {}).empty());
  EXPECT_TRUE(pyramid(c, 23, 100, {}).empty());
}

TEST(FacesCpu, AMinimumSizeAboveTheMaximumIsRefusedByName) {
  Cascade c = loadCascade(test::dataFile("cascades/haarcascade_frontalface_default.xml"));
  DetectParams p;
  p.minSize = 200, p.maxSize = 50;
  try {
    pyramid(c, 640, 480, p);
    ADD_FAILURE() << "min_size above max_size was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("min_size 200 is larger than max_size 50"), std::string::npos) << e.what();
  }
  p.maxSize = 0;  // the image: any min_size goes
  EXPECT_NO_THROW(pyramid(c, 640, 480, p));
  // In a pipeline file the error names the stage's params when the graph is built.
  Registry registry;
  registerAllNodes(registry);
  Diagnostics d("test.yaml");
  std::string yaml = "sources:\n  - {name: pictures, type: images, params: {path: " + test::picture("messi5.jpg") +
                     "}}\nstages:\n  - {name: faces, type: face_detect, inputs: {image: pictures.image}, params: "
                     "{min_size: 200, max_size: 50}}\n";
  EXPECT_EQ(buildGraph(registry, yaml, d), nullptr);
  EXPECT_NE(d.text().find("stages.faces.params"), std::string::npos) << d.text();
  EXPECT_NE(d.text().find("min_size 200 is larger than max_size 50"), std::string::npos) << d.text();
}

TEST(FacesGrouping, KeepsClustersLargerThanMinNeighborsAndAveragesThem) {
  std::vector<Window> windows = {
      {100, 100, 40, 40}, {102, 101, 40, 40}, {98, 99, 42, 42}, {101, 100, 40, 40}, {300, 50, 30, 30}};
  Detections faces = groupWindows(windows, 3);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_EQ(faces[0].neighbors, 4);
  EXPECT_EQ(faces[0].x, 100.f);  // (100 + 102 + 98 + 101) / 4 = 100.25
  EXPECT_EQ(faces[0].w, 40.f);   // 162 / 4 = 40.5, rounded half to even as OpenCV's cvRound does
}

TEST(FaceDetectGraph, WritesDetectionsAsJsonLines) {
  Registry registry;
  registerAllNodes(registry);
  test::TempDir dir;
  std::string yaml =
      "sources:\n  - {name: pictures, type: images, params: {path: " + test::picture("messi5.jpg") +
      ", grey: true}}\n" +
      "stages:\n  - {name: faces, type: face_detect, inputs: {image: pictures.image}, params: {cascade: " +
      test::dataFile("cascades/haarcascade_frontalface_default.xml") + "}}\n" +
      "sinks:\n  - {name: out, type: detections, inputs: {faces: faces.faces}, params: {path: " +
      (dir / "faces.jsonl") + "}}\n";
  auto graph = buildGraph(registry, yaml);
  ASSERT_TRUE(graph);
  graph->run();
  std::ifstream in(dir / "faces.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  auto json = nlohmann::json::parse(line);
  EXPECT_EQ(json["frame"], 0);
  ASSERT_GE(json["faces"].size(), 1u);
  EXPECT_GT(json["faces"][0]["neighbors"].get<int>(), 3);
  EXPECT_FALSE(std::getline(in, line)) << "one picture, one line";
}

}  // namespace
}  // namespace pp::faces
