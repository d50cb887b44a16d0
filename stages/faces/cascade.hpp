// A Viola-Jones cascade of Haar-feature stumps, read from OpenCV's cascade XML (the format
// opencv_traincascade writes: stageNum, stages with stageThreshold and weakClassifiers of
// internalNodes + leafValues, features with rects and weights).
#pragma once
#include <string>
#include <vector>

namespace pp::faces {

struct HaarRect {
  int x = 0, y = 0, w = 0, h = 0;
  float weight = 0;
};
struct HaarFeature {
  HaarRect rects[3];  // unused ones have weight 0
  int count = 0;
};
struct Stump {
  int feature = 0;
  float threshold = 0, left = 0, right = 0;  // value < threshold: left
};
struct CascadeStage {
  int first = 0, count = 0;  // its stumps
  float threshold = 0;
};

struct Cascade {
  int width = 0, height = 0;  // the window
  std::vector<CascadeStage> stages;
  std::vector<Stump> stumps;
  std::vector<HaarFeature> features;
  std::string path;
};

// Throws std::invalid_argument naming the file and what is wrong: not XML, truncated, another
// feature type (LBP, HOG), tilted features, trees deeper than a stump, indices out of range.
Cascade loadCascade(const std::string& path);

// Where Debian's opencv-data puts the default face cascade.
std::string defaultCascadePath();

}  // namespace pp::faces
