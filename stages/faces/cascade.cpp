#include "stages/faces/cascade.hpp"

#include <sstream>
#include <stdexcept>

#include <tinyxml2.h>

namespace pp::faces {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument("cascade " + path + ": " + what);
}

const tinyxml2::XMLElement* child(const tinyxml2::XMLElement* parent, const char* name, const std::string& path,
                                  const std::string& where) {
  const tinyxml2::XMLElement* e = parent->FirstChildElement(name);
  if (!e) fail(path, where + " has no <" + name + ">");
  return e;
}

std::string text(const tinyxml2::XMLElement* e) { return e->GetText() ? e->GetText() : ""; }

template <class T>
std::vector<T> numbers(const tinyxml2::XMLElement* e, const std::string& path, const std::string& where) {
  std::istringstream in(text(e));
  std::vector<T> out;
  T v;
  while (in >> v) out.push_back(v);
  if (!in.eof()) fail(path, where + " holds something that is not a number: '" + text(e) + "'");
  return out;
}

int integer(const tinyxml2::XMLElement* parent, const char* name, const std::string& path, const std::string& where) {
  auto v = numbers<int>(child(parent, name, path, where), path, where + " <" + name + ">");
  if (v.size() != 1) fail(path, where + " <" + name + "> must be one integer");
  return v[0];
}

}  // namespace

std::string defaultCascadePath() { return "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"; }

Cascade loadCascade(const std::string& path) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS)
    fail(path, std::string("not readable XML: ") + doc.ErrorStr());
  const tinyxml2::XMLElement* root = doc.FirstChildElement("opencv_storage");
  if (!root) fail(path, "no <opencv_storage> root: not an OpenCV cascade");
  const tinyxml2::XMLElement* c = root->FirstChildElement("cascade");
  if (!c) fail(path, "no <cascade>: the old (pre-2.4) cascade format is not supported; convert it with OpenCV");
  std::string stageType = text(child(c, "stageType", path, "<cascade>")),
              featureType = text(child(c, "featureType", path, "<cascade>"));
  if (stageType != "BOOST") fail(path, "stageType " + stageType + " is not supported (BOOST only)");
  if (featureType != "HAAR")
    fail(path, "featureType " + featureType + " is not supported (HAAR only; LBP and HOG cascades are not)");
  Cascade cascade;
  cascade.path = path;
  cascade.width = integer(c, "width", path, "<cascade>");
  cascade.height = integer(c, "height", path, "<cascade>");
  if (cascade.width < 3 || cascade.height < 3 || cascade.width > 256 || cascade.height > 256)
    fail(path, "window " + std::to_string(cascade.width) + "x" + std::to_string(cascade.height) + " is out of range");
  int stageNum = integer(c, "stageNum", path, "<cascade>");

  const tinyxml2::XMLElement* features = child(c, "features", path, "<cascade>");
  for (const auto* f = features->FirstChildElement("_"); f; f = f->NextSiblingElement("_")) {
    std::string where = "feature " + std::to_string(cascade.features.size());
    if (const auto* tilted = f->FirstChildElement("tilted"); tilted && text(tilted) != "0")
      fail(path, where + " is tilted; tilted features are not supported");
    HaarFeature feature;
    for (const auto* r = child(f, "rects", path, where)->FirstChildElement("_"); r; r = r->NextSiblingElement("_")) {
      auto v = numbers<float>(r, path, where);
      if (v.size() != 5 || feature.count == 3) fail(path, where + " needs at most 3 rects of 'x y w h weight'");
      HaarRect rect{static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]), static_cast<int>(v[3]),
                    v[4]};
      if (rect.x < 0 || rect.y < 0 || rect.w <= 0 || rect.h <= 0 || rect.x + rect.w > cascade.width ||
          rect.y + rect.h > cascade.height)
        fail(path, where + " has a rect outside the " + std::to_string(cascade.width) + "x" +
                       std::to_string(cascade.height) + " window");
      feature.rects[feature.count++] = rect;
    }
    if (feature.count < 2) fail(path, where + " has fewer than 2 rects");
    cascade.features.push_back(feature);
  }

  const tinyxml2::XMLElement* stages = child(c, "stages", path, "<cascade>");
  for (const auto* s = stages->FirstChildElement("_"); s; s = s->NextSiblingElement("_")) {
    std::string where = "stage " + std::to_string(cascade.stages.size());
    CascadeStage stage;
    stage.first = static_cast<int>(cascade.stumps.size());
    auto threshold = numbers<float>(child(s, "stageThreshold", path, where), path, where);
    if (threshold.size() != 1) fail(path, where + " <stageThreshold> must be one number");
    stage.threshold = threshold[0];
    for (const auto* w = child(s, "weakClassifiers", path, where)->FirstChildElement("_"); w;
         w = w->NextSiblingElement("_")) {
      std::string tree = where + " classifier " + std::to_string(stage.count);
      auto nodes = numbers<float>(child(w, "internalNodes", path, tree), path, tree);
      auto leaves = numbers<float>(child(w, "leafValues", path, tree), path, tree);
      if (nodes.size() != 4 || leaves.size() != 2)
        fail(path, tree + " is not a stump (trees deeper than one split are not supported)");
      int feature = static_cast<int>(nodes[2]);
      if (feature < 0 || feature >= static_cast<int>(cascade.features.size()))
        fail(path, tree + " names feature " + std::to_string(feature) + ", which does not exist");
      cascade.stumps.push_back({feature, nodes[3], leaves[0], leaves[1]});
      ++stage.count;
    }
    if (stage.count == 0) fail(path, where + " has no weak classifiers");
    cascade.stages.push_back(stage);
  }
  if (static_cast<int>(cascade.stages.size()) != stageNum)
    fail(path, "stageNum says " + std::to_string(stageNum) + " stages but the file has " +
                   std::to_string(cascade.stages.size()) + " (truncated?)");
  if (cascade.stages.empty()) fail(path, "has no stages");
  return cascade;
}

}  // namespace pp::faces
