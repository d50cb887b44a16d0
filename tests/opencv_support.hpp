// OpenCV as the trusted peer in tests: our images as cv::Mat views.
#pragma once
#include <opencv2/core.hpp>

#include "pipeline/image.hpp"

namespace pp::test {

// A view of a host image's pixels (no copy).
inline cv::Mat asMat(const Image& image) {
  int depth = image.format().depth == Depth::u8 ? CV_8U : image.format().depth == Depth::u16 ? CV_16U : CV_32F;
  return cv::Mat(image.height(), image.width(), CV_MAKETYPE(depth, image.format().channels),
                 const_cast<void*>(image.data()), image.pitch());
}

}  // namespace pp::test
