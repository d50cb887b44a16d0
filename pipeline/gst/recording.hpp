// Raw recordings (sink `record`, source `replay`): a Matroska file with one uncompressed GRAY8
// video track per recorded plane (16-bit planes as two bytes a sample, little-endian, so the track
// is twice as wide) and a UTF-8 text track with one line of `key=value` metadata per frame at the
// frame's time: sequence, timestamps, the camera's frame id, exposure, gain, mosaic, bit depth, the
// camera's other chunk values (chunk.NAME=value), and each plane's size and CRC-32. A last line `end=1 frames=N` marks
// a finished file, so a truncated one is recognised. Plain text, not JSON: matroskademux escapes quotes in text tracks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/node.hpp"

namespace pp::gst {

struct PlaneRecord {
  std::string port;
  Format format;
  int width = 0, height = 0;
  uint32_t crc = 0;
  int trackWidth() const { return width * static_cast<int>(pixelBytes(format)); }
};

struct FrameRecord {
  uint64_t frame = 0;  // index in the file
  FrameMeta
      meta;  // source, sequence, camera timestamp and frame id, exposure, gain, chunks, mosaic, bit depth, incomplete
  int64_t hostTimeNs = 0;  // wall clock when the frame arrived (ns since the epoch)
  std::vector<PlaneRecord> planes;
};

std::string encodeFrame(const FrameRecord& record);
// The end line is kEndRecord followed by the frame count.
constexpr const char* kEndRecord = "end=1 frames=";
std::string encodeEnd(uint64_t frames);
// A frame line, or nullopt-like: `end` set (and `frames` the count) for the end line. Throws
// std::runtime_error naming the field when a line is malformed.
struct RecordLine {
  bool end = false;
  uint64_t frames = 0;
  FrameRecord frame;
};
RecordLine decodeLine(const std::string& line);

// CRC-32 (zlib) of an image's pixel bytes, row by row without padding.
uint32_t crcOf(const Image& image);

}  // namespace pp::gst
