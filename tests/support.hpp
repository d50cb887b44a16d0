// Helpers shared by the tests: temporary folders, random images, pixel comparison.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "pipeline/image.hpp"

namespace pp::test {

// A fresh folder under the system temp dir, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "polarpipe-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The tests' random inputs: a fresh seed each run, printed (stderr) at the first draw, so that a
// failure can be replayed: POLARPIPE_TEST_SEED=N gives the same tests, run in the same order, the
// same inputs.
inline std::mt19937& rng() {
  static std::mt19937 generator([] {
    const char* asked = std::getenv("POLARPIPE_TEST_SEED");
    std::mt19937::result_type seed = std::random_device{}();
    if (asked && *asked) {
      char* end = nullptr;
      seed = static_cast<std::mt19937::result_type>(std::strtoul(asked, &end, 10));
      if (*end) throw std::invalid_argument(std::string("POLARPIPE_TEST_SEED: not a number: '") + asked + "'");
    }
    std::fprintf(stderr, "random test inputs: POLARPIPE_TEST_SEED=%lu\n", static_cast<unsigned long>(seed));
    return seed;
  }());
  return generator;
}

// Every sample uniformly random over the depth's range (floats in [0, 1)).
inline Image randomImage(Format format, int width, int height, MemoryKind memory = MemoryKind::host) {
  Image image(format, width, height, memory);
  std::uniform_int_distribution<int> bytes(0, 255);
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  for (int y = 0; y < height; ++y) {
    char* row = static_cast<char*>(image.data()) + y * image.pitch();
    for (int i = 0; i < width * format.channels; ++i) {
      if (format.depth == Depth::u8) reinterpret_cast<uint8_t*>(row)[i] = static_cast<uint8_t>(bytes(rng()));
      if (format.depth == Depth::u16)
        reinterpret_cast<uint16_t*>(row)[i] = static_cast<uint16_t>(bytes(rng()) << 8 | bytes(rng()));
      if (format.depth == Depth::f32) reinterpret_cast<float*>(row)[i] = unit(rng());
    }
  }
  return image;
}

// True when both images hold the same pixels (padding ignored).
inline ::testing::AssertionResult samePixels(const Image& a, const Image& b) {
  if (a.format() != b.format() || a.width() != b.width() || a.height() != b.height())
    return ::testing::AssertionFailure() << "shapes differ: " << toString(a.format()) << " " << a.width() << "x"
                                         << a.height() << " vs " << toString(b.format()) << " " << b.width() << "x"
                                         << b.height();
  size_t rowBytes = pixelBytes(a.format()) * a.width();
  for (int y = 0; y < a.height(); ++y)
    if (std::memcmp(static_cast<const char*>(a.data()) + y * a.pitch(),
                    static_cast<const char*>(b.data()) + y * b.pitch(), rowBytes) != 0)
      return ::testing::AssertionFailure() << "row " << y << " differs";
  return ::testing::AssertionSuccess();
}

// Folder with the repository's files (config/, tests/data/), set by CMake.
inline std::filesystem::path sourceDir() { return POLARPIPE_SOURCE_DIR; }
inline std::filesystem::path binaryDir() { return POLARPIPE_BINARY_DIR; }
// A fixture under tests/data (found beside the test binary's source tree, or through
// POLARPIPE_TEST_DATA when the binaries run elsewhere).
inline std::string dataFile(const std::string& relative) {
  const char* data = std::getenv("POLARPIPE_TEST_DATA");
  return ((data ? std::filesystem::path(data) : sourceDir() / "tests/data") / relative).string();
}
// A real picture from tests/data/pictures.
inline std::string picture(const std::string& name) { return dataFile("pictures/" + name); }

}  // namespace pp::test
