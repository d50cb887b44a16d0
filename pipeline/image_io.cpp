#include "pipeline/image_io.hpp"

#include <png.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb_image.h>

namespace pp {

namespace {

std::string lowerExtension(const std::string& path) {
  auto dot = path.find_last_of('.');
  if (dot == std::string::npos) return "";
  std::string ext = path.substr(dot + 1);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

[[noreturn]] void fail(const std::string& path, const std::string& why) { throw ImageFileError(path + ": " + why); }

bool littleEndianHost() {
  const uint16_t one = 1;
  return *reinterpret_cast<const uint8_t*>(&one) == 1;
}

// The raw formats: PFM ("Pf" grey / "PF" RGB float, scale < 0 little endian, rows bottom-up) and
// binary PGM/PPM ("P5" grey / "P6" RGB, maxval > 255 means 16-bit big-endian, rows top-down).
struct RawHeader {
  Format format;
  int width = 0, height = 0;
  bool littleEndian = false, bottomUp = false;
};

// Skips whitespace and '#' comments between header fields, as netpbm allows.
std::istream& field(std::istream& in) {
  while (in && (std::isspace(in.peek()) || in.peek() == '#'))
    if (in.get() == '#') in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  return in;
}

RawHeader readRawHeader(std::istream& in, const std::string& path) {
  std::string magic;
  RawHeader h;
  if (!(in >> magic)) fail(path, "empty file");
  if (magic == "Pf" || magic == "PF") {
    double scale = 0;
    if (!(field(in) >> h.width) || !(field(in) >> h.height) || !(field(in) >> scale) || h.width <= 0 || h.height <= 0 ||
        scale == 0)
      fail(path, "malformed PFM header");
    h.format = {Depth::f32, magic == "PF" ? 3 : 1};
    h.littleEndian = scale < 0;
    h.bottomUp = true;
  } else if (magic == "P5" || magic == "P6") {
    int maxval = 0;
    if (!(field(in) >> h.width) || !(field(in) >> h.height) || !(field(in) >> maxval) || h.width <= 0 ||
        h.height <= 0 || maxval <= 0 || maxval > 65535)
      fail(path, "malformed PGM/PPM header");
    h.format = {maxval > 255 ? Depth::u16 : Depth::u8, magic == "P6" ? 3 : 1};
  } else {
    fail(path, "not a binary PGM/PPM (P5/P6) or PFM (Pf/PF) file");
  }
  in.get();  // the single whitespace before the samples
  return h;
}

void readRawInto(const std::string& path, Image* dst, ImageFileInfo* info) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  RawHeader h = readRawHeader(in, path);
  if (info) *info = {h.format, h.width, h.height};
  if (!dst) return;
  if (dst->format() != h.format || dst->width() != h.width || dst->height() != h.height)
    fail(path, "is " + std::to_string(h.width) + "x" + std::to_string(h.height) + " " + toString(h.format) +
                   ", expected " + std::to_string(dst->width()) + "x" + std::to_string(dst->height()) + " " +
                   toString(dst->format()));
  size_t sample = depthBytes(h.format.depth);
  size_t rowBytes = pixelBytes(h.format) * h.width;
  bool swap = sample > 1 && h.littleEndian != littleEndianHost();
  for (int i = 0; i < h.height; ++i) {
    int y = h.bottomUp ? h.height - 1 - i : i;
    char* row = static_cast<char*>(dst->data()) + y * dst->pitch();
    if (!in.read(row, static_cast<std::streamsize>(rowBytes)))
      fail(path, "truncated data at row " + std::to_string(i) + " of " + std::to_string(h.height));
    if (swap)
      for (size_t k = 0; k < rowBytes; k += sample) std::reverse(row + k, row + k + sample);
  }
}

bool isRawFormat(const std::string& ext) { return ext == "pfm" || ext == "pgm" || ext == "ppm"; }

void writePfm(const std::string& path, const Image& image) {
  if (image.format().depth != Depth::f32 || (image.format().channels != 1 && image.format().channels != 3))
    fail(path, "PFM holds f32x1 or f32x3, not " + toString(image.format()));
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, std::string("cannot create: ") + std::strerror(errno));
  out << (image.format().channels == 3 ? "PF" : "Pf") << "\n"
      << image.width() << " " << image.height() << "\n"
      << (littleEndianHost() ? "-1.0" : "1.0") << "\n";
  size_t rowBytes = pixelBytes(image.format()) * image.width();
  for (int y = image.height() - 1; y >= 0; --y)
    out.write(static_cast<const char*>(image.data()) + y * image.pitch(), static_cast<std::streamsize>(rowBytes));
  if (!out) fail(path, "write failed");
}

// Binary PGM (P5) or PPM (P6); 16-bit samples are big-endian as the format requires.
void writePnm(const std::string& path, const Image& image) {
  Format f = image.format();
  if (f.depth == Depth::f32 || (f.channels != 1 && f.channels != 3))
    fail(path, "PGM/PPM holds u8 or u16 with 1 or 3 channels, not " + toString(f));
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, std::string("cannot create: ") + std::strerror(errno));
  out << (f.channels == 1 ? "P5" : "P6") << "\n"
      << image.width() << " " << image.height() << "\n"
      << (f.depth == Depth::u8 ? 255 : 65535) << "\n";
  size_t rowBytes = pixelBytes(f) * image.width();
  std::vector<char> row(rowBytes);
  for (int y = 0; y < image.height(); ++y) {
    std::memcpy(row.data(), static_cast<const char*>(image.data()) + y * image.pitch(), rowBytes);
    if (f.depth == Depth::u16 && littleEndianHost())
      for (size_t i = 0; i < rowBytes; i += 2) std::swap(row[i], row[i + 1]);
    out.write(row.data(), static_cast<std::streamsize>(rowBytes));
  }
  if (!out) fail(path, "write failed");
}

void writePng(const std::string& path, const Image& image) {
  Format f = image.format();
  if (f.depth == Depth::f32) fail(path, "PNG holds 8 or 16-bit samples; write float planes as .pfm");
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width());
  png.height = static_cast<png_uint_32>(image.height());
  static const png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  if (f.channels < 1 || f.channels > 4) fail(path, "unsupported channel count " + std::to_string(f.channels));
  png.format = kFormats[f.channels] | (f.depth == Depth::u16 ? PNG_FORMAT_FLAG_LINEAR : 0);
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.data(),
                               static_cast<png_int_32>(image.pitch() / depthBytes(f.depth)), nullptr))
    fail(path, std::string("PNG write failed: ") + png.message);
}

// stb_image reports the channel count it found; we keep grey, RGB and RGBA (grey+alpha loses alpha).
int keptChannels(int found) { return found == 2 ? 1 : found; }

}  // namespace

ImageFileInfo probeImage(const std::string& path) {
  if (isRawFormat(lowerExtension(path))) {
    ImageFileInfo info;
    readRawInto(path, nullptr, &info);
    return info;
  }
  int w = 0, h = 0, c = 0;
  if (!stbi_info(path.c_str(), &w, &h, &c)) fail(path, std::string("cannot read image: ") + stbi_failure_reason());
  bool sixteen = stbi_is_16_bit(path.c_str());
  return {{sixteen ? Depth::u16 : Depth::u8, keptChannels(c)}, w, h};
}

void readImageInto(const std::string& path, Image& dst) {
  if (dst.memory() == MemoryKind::device) throw std::logic_error("readImageInto needs a host or pinned image");
  if (isRawFormat(lowerExtension(path))) {
    readRawInto(path, &dst, nullptr);
    return;
  }
  ImageFileInfo info = probeImage(path);
  if (info.format.depth == Depth::u8 && info.format.channels >= 3 && dst.format() == Format{Depth::u8, 1})
    info.format.channels = 1;  // stb converts
  if (info.format != dst.format() || info.width != dst.width() || info.height != dst.height())
    fail(path, "is " + std::to_string(info.width) + "x" + std::to_string(info.height) + " " + toString(info.format) +
                   ", expected " + std::to_string(dst.width()) + "x" + std::to_string(dst.height()) + " " +
                   toString(dst.format()));
  int w = 0, h = 0, c = 0;
  int want = info.format.channels;
  std::unique_ptr<void, void (*)(void*)> pixels(info.format.depth == Depth::u16
                                                    ? static_cast<void*>(stbi_load_16(path.c_str(), &w, &h, &c, want))
                                                    : static_cast<void*>(stbi_load(path.c_str(), &w, &h, &c, want)),
                                                stbi_image_free);
  if (!pixels) fail(path, std::string("cannot decode: ") + stbi_failure_reason());
  size_t rowBytes = pixelBytes(info.format) * w;
  for (int y = 0; y < h; ++y)
    std::memcpy(static_cast<char*>(dst.data()) + y * dst.pitch(), static_cast<const char*>(pixels.get()) + y * rowBytes,
                rowBytes);
}

Image readGreyImage(const std::string& path) {
  ImageFileInfo info = probeImage(path);
  if (info.format.depth != Depth::u8)
    fail(path, "is " + toString(info.format) + "; an 8-bit grey or colour picture is needed");
  Image image({Depth::u8, 1}, info.width, info.height, MemoryKind::host);
  readImageInto(path, image);
  return image;
}

Image readImage(const std::string& path) {
  ImageFileInfo info = probeImage(path);
  Image image(info.format, info.width, info.height, MemoryKind::host);
  readImageInto(path, image);
  return image;
}

void writeImage(const std::string& path, const Image& image) {
  if (image.memory() == MemoryKind::device) throw std::logic_error("writeImage needs a host or pinned image");
  std::string ext = lowerExtension(path);
  if (ext == "png") return writePng(path, image);
  if (ext == "pfm") return writePfm(path, image);
  if (ext == "pgm" || ext == "ppm") return writePnm(path, image);
  fail(path, "unknown image extension '." + ext + "' (allowed: .png, .pgm, .ppm, .pfm)");
}

}  // namespace pp
