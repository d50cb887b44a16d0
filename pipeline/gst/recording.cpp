#include "pipeline/gst/recording.hpp"

#include <zlib.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace pp::gst {

namespace {

// Node names go in as one token: nothing that would split a key=value line.
std::string token(std::string text) {
  for (char& c : text)
    if (c == ' ' || c == '=' || c == ',' || c == ':' || c == '\n') c = '_';
  return text.empty() ? "-" : text;
}

std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string item;
  while (in >> item) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("metadata item '" + item + "' is not key=value");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

const std::string& field(const std::map<std::string, std::string>& f, const std::string& key) {
  auto it = f.find(key);
  if (it == f.end()) throw std::runtime_error("metadata lacks '" + key + "'");
  return it->second;
}

template <class T> T number(const std::map<std::string, std::string>& f, const std::string& key) {
  const std::string& text = field(f, key);
  std::istringstream in(text);
  T value{};
  if (!(in >> value) || !in.eof()) throw std::runtime_error("metadata '" + key + "=" + text + "' is not a number");
  return value;
}

Format parseFormat(const std::string& text) {
  for (Format f : {Format{Depth::u8, 1}, Format{Depth::u16, 1}})
    if (toString(f) == text) return f;
  throw std::runtime_error("plane format '" + text + "' is not u8x1 or u16x1");
}

}  // namespace

std::string encodeFrame(const FrameRecord& r) {
  std::ostringstream out;
  const FrameMeta& m = r.meta;
  out.precision(17);
  out << "frame=" << r.frame << " source=" << token(m.source) << " sequence=" << m.sequence
      << " camera_ts_ns=" << m.cameraTimestampNs << " host_ts_ns=" << r.hostTimeNs << " exposure_us=" << m.exposureUs
      << " gain=" << m.gain << " mosaic=" << token(m.mosaic) << " bayer=" << token(m.bayer)
      << " bit_depth=" << m.bitDepth << " sample_format=" << token(m.sampleFormat)
      << " incomplete=" << (m.incomplete ? 1 : 0) << " camera_frame_id=" << m.cameraFrameId;
  if (!m.angles.empty())
    out << " angles=" << m.angles[0] << "/" << m.angles[1] << "/" << m.angles[2] << "/" << m.angles[3];
  for (const auto& [name, value] : m.chunks) out << " chunk." << token(name) << "=" << value;
  out << " planes=";
  for (size_t i = 0; i < r.planes.size(); ++i) {
    const PlaneRecord& p = r.planes[i];
    char crc[9];
    std::snprintf(crc, sizeof crc, "%08x", p.crc);
    out << (i ? "," : "") << token(p.port) << ":" << toString(p.format) << ":" << p.width << "x" << p.height << ":"
        << crc;
  }
  return out.str();
}

std::string encodeEnd(uint64_t frames) { return kEndRecord + std::to_string(frames); }

RecordLine decodeLine(const std::string& line) {
  auto f = fields(line);
  RecordLine out;
  if (f.count("end")) {
    out.end = true;
    out.frames = number<uint64_t>(f, "frames");
    return out;
  }
  FrameRecord& r = out.frame;
  r.frame = number<uint64_t>(f, "frame");
  r.meta.source = field(f, "source");
  r.meta.sequence = number<uint64_t>(f, "sequence");
  r.meta.cameraTimestampNs = number<uint64_t>(f, "camera_ts_ns");
  r.hostTimeNs = number<int64_t>(f, "host_ts_ns");
  r.meta.exposureUs = number<double>(f, "exposure_us");
  r.meta.gain = number<double>(f, "gain");
  r.meta.mosaic = field(f, "mosaic") == "-" ? "" : field(f, "mosaic");
  r.meta.bayer =
      !f.count("bayer") || field(f, "bayer") == "-" ? "" : field(f, "bayer");  // recordings before it have none
  r.meta.bitDepth = number<int>(f, "bit_depth");
  r.meta.sampleFormat = !f.count("sample_format") || field(f, "sample_format") == "-"
                            ? ""
                            : field(f, "sample_format");  // recordings before it have none
  r.meta.incomplete = number<int>(f, "incomplete") != 0;
  r.meta.cameraFrameId =
      f.count("camera_frame_id") ? number<uint64_t>(f, "camera_frame_id") : 0;  // recordings before it have none
  if (f.count("angles")) {
    int a[4];
    if (std::sscanf(field(f, "angles").c_str(), "%d/%d/%d/%d", &a[0], &a[1], &a[2], &a[3]) != 4)
      throw std::runtime_error("metadata 'angles=" + field(f, "angles") + "' is not A/B/C/D");
    r.meta.angles.assign(a, a + 4);
  }
  for (const auto& [key, value] : f)
    if (key.rfind("chunk.", 0) == 0) r.meta.chunks[key.substr(6)] = number<double>(f, key);
  std::istringstream planes(field(f, "planes"));
  std::string plane;
  while (std::getline(planes, plane, ',')) {
    PlaneRecord p;
    char port[128], format[16];
    unsigned crc = 0;
    if (std::sscanf(plane.c_str(), "%127[^:]:%15[^:]:%dx%d:%8x", port, format, &p.width, &p.height, &crc) != 5 ||
        p.width <= 0 || p.height <= 0)
      throw std::runtime_error("plane '" + plane + "' is not PORT:FORMAT:WxH:CRC");
    p.port = port;
    p.format = parseFormat(format);
    p.crc = crc;
    r.planes.push_back(p);
  }
  if (r.planes.empty()) throw std::runtime_error("frame " + std::to_string(r.frame) + " lists no planes");
  return out;
}

uint32_t crcOf(const Image& image) {
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t rowBytes = static_cast<size_t>(image.width()) * pixelBytes(image.format());
  for (int y = 0; y < image.height(); ++y)
    crc = crc32(crc, static_cast<const Bytef*>(image.data()) + image.pitch() * static_cast<size_t>(y),
                static_cast<uInt>(rowBytes));
  return static_cast<uint32_t>(crc);
}

}  // namespace pp::gst
