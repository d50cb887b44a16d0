// Reading and writing image files. PNG and JPEG are decoded by stb_image and PNG is written by
// libpng; PFM (float) and binary PGM/PPM (raw mosaics, 16-bit big-endian) are plain headers over
// raw samples and handled here.
#pragma once
#include <string>

#include "pipeline/image.hpp"

namespace pp {

struct ImageFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ImageFileInfo {
  Format format;
  int width = 0, height = 0;
};

// PNG, JPEG, PGM/PPM (8 or 16 bit) and PFM. Grey+alpha loses its alpha.
Image readImage(const std::string& path);
// Size and format without decoding the pixels.
ImageFileInfo probeImage(const std::string& path);
// Decodes into an existing host or pinned image of the same size and format: no allocation of
// image buffers, as the `images` source needs. An 8-bit colour file read into a u8x1 image becomes
// grey (stb_image's luma: (77 R + 150 G + 29 B) / 256).
void readImageInto(const std::string& path, Image& dst);
// An 8-bit picture as u8x1, colour converted as above.
Image readGreyImage(const std::string& path);

// By extension: .png (u8 or u16, 1/3/4 channels), .pgm/.ppm (u8 or u16), .pfm (f32, 1 or 3 channels).
void writeImage(const std::string& path, const Image& image);

}  // namespace pp
