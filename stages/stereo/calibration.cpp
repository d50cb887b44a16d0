#include "stages/stereo/calibration.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cuda/remap_math.hpp"
#if POLARPIPE_HAS_CUDA
#include "cuda/remap.cuh"
#endif

namespace pp::stereo {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument("calibration " + path + ": " + what);
}

// A matrix as FileStorage writes it ({rows, cols, dt, data}) or as plain YAML: a flat list or a
// list of rows. Returns rows x cols values, row-major (cols 0: a vector of any length; a 3x1 may
// also be written 1x3).
std::vector<double> readMatrix(const YAML::Node& root, const std::string& key, const std::string& path, int rows,
                               int cols) {
  YAML::Node node = root[key];
  if (!node) fail(path, "missing key " + key);
  std::vector<double> values;
  int gotRows = 0, gotCols = 0;
  try {
    if (node.IsMap()) {
      if (!node["rows"] || !node["cols"] || !node["data"]) fail(path, key + " needs rows, cols and data");
      gotRows = node["rows"].as<int>(), gotCols = node["cols"].as<int>();
      // Calibration matrices are at most 4x4 (distortion 1x14); checked before rows x cols can overflow.
      if (gotRows < 1 || gotRows > 64 || gotCols < 1 || gotCols > 64)
        fail(path, key + " is " + std::to_string(gotRows) + "x" + std::to_string(gotCols) +
                       "; a calibration matrix has 1 to 64 rows and columns");
      for (const auto& v : node["data"]) values.push_back(v.as<double>());
      if (static_cast<int>(values.size()) != gotRows * gotCols)
        fail(path, key + " has " + std::to_string(values.size()) + " values for " + std::to_string(gotRows) + "x" +
                       std::to_string(gotCols));
    } else if (node.IsSequence() && node.size() > 0 && node[0].IsSequence()) {
      gotRows = static_cast<int>(node.size());
      for (const auto& row : node) {
        if (gotCols == 0) gotCols = static_cast<int>(row.size());
        if (static_cast<int>(row.size()) != gotCols) fail(path, key + " has rows of different lengths");
        for (const auto& v : row) values.push_back(v.as<double>());
      }
    } else if (node.IsSequence()) {
      for (const auto& v : node) values.push_back(v.as<double>());
      gotRows = rows > 0 ? rows : 1, gotCols = static_cast<int>(values.size()) / gotRows;
      if (cols > 0 && static_cast<int>(values.size()) != rows * cols)
        fail(path, key + " has " + std::to_string(values.size()) + " values; a " + std::to_string(rows) + "x" +
                       std::to_string(cols) + " matrix has " + std::to_string(rows * cols));
    } else {
      fail(path, key + " is not a matrix (expected !!opencv-matrix or a list)");
    }
  } catch (const YAML::Exception& e) {
    fail(path, key + ": " + e.msg);
  }
  for (double v : values)
    if (!std::isfinite(v)) fail(path, key + " holds a value that is not a finite number");
  bool anyLength = cols == 0;  // distortion: 1xN or Nx1
  bool fits = anyLength ? (gotRows == 1 || gotCols == 1)
                        : (gotRows == rows && gotCols == cols) || (cols == 1 && gotRows == 1 && gotCols == rows);
  if (!fits)
    fail(path, key + " must be " + std::to_string(rows) + "x" + std::to_string(cols) + ", not " +
                   std::to_string(gotRows) + "x" + std::to_string(gotCols));
  return values;
}

template <size_t N> std::array<double, N> fixed(const std::vector<double>& v) {
  std::array<double, N> a{};
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

std::vector<double> readDistortion(const YAML::Node& root, const std::string& key, const std::string& path) {
  std::vector<double> d = readMatrix(root, key, path, 1, 0);
  size_t n = d.size();
  if (n != 4 && n != 5 && n != 8 && n != 12 && n != 14)
    fail(path, key + " has " + std::to_string(n) +
                   " coefficients; OpenCV writes 4, 5, 8, 12 or 14 (k1 k2 p1 p2 [k3 [k4 k5 k6 [s1..s4 [tx ty]]]])");
  for (size_t i = 8; i < n; ++i)
    if (d[i] != 0)
      fail(path, key + " has a non-zero thin-prism or tilt coefficient (index " + std::to_string(i) +
                     "); only k1..k6, p1, p2 are supported");
  d.resize(std::min<size_t>(n, 8));
  return d;
}

Matrix3 inverse(const Matrix3& a) {
  double det =
      a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
  if (std::fabs(det) < 1e-300) throw std::invalid_argument("rectification matrix P*R is singular");
  Matrix3 r = {a[4] * a[8] - a[5] * a[7], a[2] * a[7] - a[1] * a[8], a[1] * a[5] - a[2] * a[4],
               a[5] * a[6] - a[3] * a[8], a[0] * a[8] - a[2] * a[6], a[2] * a[3] - a[0] * a[5],
               a[3] * a[7] - a[4] * a[6], a[1] * a[6] - a[0] * a[7], a[0] * a[4] - a[1] * a[3]};
  for (double& v : r) v /= det;
  return r;
}

// OpenCV's camera matrix [fx 0 cx; 0 fy cy; 0 0 1]: positive focal lengths, the last row 0 0 1.
void checkCameraMatrix(const Matrix3& m, const std::string& key, const std::string& path) {
  if (!(m[0] > 0) || !(m[4] > 0))
    fail(path,
         key + " has focal lengths fx " + std::to_string(m[0]) + ", fy " + std::to_string(m[4]) + "; both must be > 0");
  if (m[6] != 0 || m[7] != 0 || m[8] != 1)
    fail(path, key + "'s last row must be 0 0 1, as OpenCV writes a camera matrix");
}

}  // namespace

StereoCalibration loadCalibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot be read");
  std::error_code ec;
  if (auto size = std::filesystem::file_size(path, ec); !ec && size > (1u << 20))
    fail(path,
         "is " + std::to_string(size) + " bytes; a stereo calibration is a few kilobytes (is this the right file?)");
  std::stringstream text;
  std::string line;
  bool firstLine = true;
  while (std::getline(in, line)) {
    if (firstLine && line.rfind("%YAML:", 0) == 0) line = "%YAML 1.1";  // FileStorage's header is not YAML
    firstLine = false;
    text << line << '\n';
  }
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    fail(path, "not YAML: " + e.msg);
  }
  if (!root.IsMap()) fail(path, "expected a map of matrices (M1, D1, M2, D2, R, T, R1, R2, P1, P2, Q)");
  StereoCalibration c;
  c.path = path;
  c.left = {fixed<9>(readMatrix(root, "M1", path, 3, 3)), readDistortion(root, "D1", path),
            fixed<9>(readMatrix(root, "R1", path, 3, 3)), fixed<12>(readMatrix(root, "P1", path, 3, 4))};
  c.right = {fixed<9>(readMatrix(root, "M2", path, 3, 3)), readDistortion(root, "D2", path),
             fixed<9>(readMatrix(root, "R2", path, 3, 3)), fixed<12>(readMatrix(root, "P2", path, 3, 4))};
  checkCameraMatrix(c.left.m, "M1", path);
  checkCameraMatrix(c.right.m, "M2", path);
  c.rotation = fixed<9>(readMatrix(root, "R", path, 3, 3));
  c.translation = fixed<3>(readMatrix(root, "T", path, 3, 1));
  c.q = fixed<16>(readMatrix(root, "Q", path, 4, 4));
  for (const char* key : {"image_width", "image_height"})
    if (root[key] &&
        (!root[key].IsScalar() || root[key].as<std::string>().find_first_not_of("0123456789") != std::string::npos))
      fail(path, std::string(key) + " must be a positive integer");
  try {
    if (root["image_width"]) c.width = root["image_width"].as<int>();
    if (root["image_height"]) c.height = root["image_height"].as<int>();
  } catch (const YAML::Exception&) {
    fail(path,
         "image_width and image_height must be integers of at most " + std::to_string(std::numeric_limits<int>::max()));
  }
  if (c.q[14] == 0) fail(path, "Q[3][2] is 0: not a disparity-to-depth matrix");
  return c;
}

void checkCalibrationSize(const StereoCalibration& c, int width, int height) {
  if (c.width > 0 && (c.width != width || c.height != height))
    throw std::invalid_argument("calibration " + c.path + " is for " + std::to_string(c.width) + "x" +
                                std::to_string(c.height) + " images, not " + std::to_string(width) + "x" +
                                std::to_string(height));
}

Image rectifyMap(const Camera& camera, int width, int height) {
  // Rectified pixel -> ray in the rectified camera -> rotate back -> distort -> source pixel.
  Matrix3 pr;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      pr[i * 3 + j] = camera.p[i * 4 + 0] * camera.r[0 * 3 + j] + camera.p[i * 4 + 1] * camera.r[1 * 3 + j] +
                      camera.p[i * 4 + 2] * camera.r[2 * 3 + j];
  Matrix3 ir = inverse(pr);
  double fx = camera.m[0], fy = camera.m[4], cx = camera.m[2], cy = camera.m[5];
  double k[8] = {};
  std::copy(camera.d.begin(), camera.d.end(), k);  // k1 k2 p1 p2 k3 k4 k5 k6
  Image map({Depth::f32, 2}, width, height, MemoryKind::host);
  auto v = map.view<float>();
  for (int y = 0; y < height; ++y) {
    double rx = y * ir[1] + ir[2], ry = y * ir[4] + ir[5], rw = y * ir[7] + ir[8];
    for (int x = 0; x < width; ++x, rx += ir[0], ry += ir[3], rw += ir[6]) {
      double w = 1. / rw, px = rx * w, py = ry * w;
      double x2 = px * px, y2 = py * py, r2 = x2 + y2, xy2 = 2 * px * py;
      double kr = (1 + ((k[4] * r2 + k[1]) * r2 + k[0]) * r2) / (1 + ((k[7] * r2 + k[6]) * r2 + k[5]) * r2);
      v.at(x, y, 0) = static_cast<float>(fx * (px * kr + k[2] * xy2 + k[3] * (r2 + 2 * x2)) + cx);
      v.at(x, y, 1) = static_cast<float>(fy * (py * kr + k[2] * (r2 + 2 * y2) + k[3] * xy2) + cy);
    }
  }
  return map;
}

void remapCpu(const Image& src, const Image& map, Image& dst) {
  auto s = src.view<uint8_t>();
  auto m = map.view<float>();
  auto d = dst.view<uint8_t>();
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x) {
      RemapTap t = remapTap(m.at(x, y, 0), m.at(x, y, 1));
      for (int c = 0; c < d.channels; ++c) d.at(x, y, c) = bilinear(s, t, c);
    }
}

#if POLARPIPE_HAS_CUDA
void remapCuda(const Image& src, const Image& map, Image& dst, StreamHandle stream) {
  launchRemap(src.view<uint8_t>(), map.view<float>(), dst.view<uint8_t>(), stream);
}
#else
void remapCuda(const Image&, const Image&, Image&, StreamHandle) {
  throw std::logic_error("rectify: this build has no CUDA");
}
#endif

}  // namespace pp::stereo
