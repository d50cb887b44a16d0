// A stereo calibration as OpenCV's stereoCalibrate + stereoRectify write it (FileStorage YAML with
// !!opencv-matrix entries, or plain YAML with the same keys), and the undistort-rectify maps built
// from it with the model of OpenCV's initUndistortRectifyMap.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "pipeline/image.hpp"

namespace pp::stereo {

using Matrix3 = std::array<double, 9>;    // row-major
using Matrix34 = std::array<double, 12>;  // row-major 3x4 (P1, P2)

struct Camera {
  Matrix3 m{};            // intrinsics
  std::vector<double> d;  // distortion k1 k2 p1 p2 [k3 [k4 k5 k6]]: 4, 5 or 8 values (zero thin prism / tilt dropped)
  Matrix3 r{};            // rectifying rotation (R1 or R2)
  Matrix34 p{};           // projection in the rectified frame (P1 or P2)
};

struct StereoCalibration {
  Camera left, right;
  Matrix3 rotation{};                   // R: right camera relative to the left
  std::array<double, 3> translation{};  // T
  std::array<double, 16> q{};           // disparity-to-depth (row-major 4x4)
  int width = 0, height = 0;            // image size it was made for (0: not recorded)
  std::string path;                     // where it came from, for messages
};

// Throws std::invalid_argument naming the file and the key that is missing or malformed.
StereoCalibration loadCalibration(const std::string& path);

// The size check a user of the maps needs: the frame must be the size the calibration was made
// for, when it records one.
void checkCalibrationSize(const StereoCalibration& c, int width, int height);

// Source coordinates (f32x2, host) of each pixel of the rectified width x height image, as
// initUndistortRectifyMap computes them (in double, stored as float).
Image rectifyMap(const Camera& camera, int width, int height);

// CPU reference of the bilinear remap (cuda/remap_math.hpp's fixed point): src and dst u8 with 1 or
// 3 channels, map f32x2 at dst's size; host memory.
void remapCpu(const Image& src, const Image& map, Image& dst);
// CUDA: device images, enqueued on `stream`.
void remapCuda(const Image& src, const Image& map, Image& dst, StreamHandle stream);

}  // namespace pp::stereo
