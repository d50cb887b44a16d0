// demosaic: polarization demosaic for mono (IMX250MZR) and colour (IMX250MYR) sensors.
// Colour: each angle's sub-image (one pixel of every 2x2 block) is an RGGB Bayer image at half
// resolution, demosaiced with Malvar-He-Cutler. Mono: half-resolution super-pixels, or full
// resolution with each angle interpolated bilinearly. Then Stokes, DoLP, AoLP and the HSV visual.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "cuda/polar_math.hpp"  // Settings and Planes: the parameters of both backends
#include "pipeline/gpu.hpp"
#include "pipeline/image.hpp"

namespace pp::demosaic {

using polar::Mosaic;
using polar::Planes;
using polar::RawFormat;
using polar::Settings;

// Output names as the config and the CLI know them, and what each holds in one line. Planes in
// "the samples' range" are u8 for mono8 (or with depth u8) and u16 otherwise, with a colour
// sensor's three channels.
const std::vector<std::pair<std::string, std::string>>& outputMeanings();
const std::vector<std::string>& outputNames();
const char* angleName(int k);  // "angle_0" ...

// Raw sample formats by name (mono8, mono10, mono12, mono16, mono10p, mono12p, mono10packed,
// mono12packed: see polar::RawFormat); rawFormatOf throws std::invalid_argument for another name.
const std::vector<std::string>& rawFormatNames();
RawFormat rawFormatOf(const std::string& name);
const std::string& rawFormatName(RawFormat format);

// What the demosaic stage and `polarpipe demosaic` take, declared once as YAML keys and
// command-line options.
struct DemosaicParams {
  std::string mosaic = "polar_rggb";
  std::string pixel_format = "mono8";
  std::string depth = "keep";
  std::vector<int> angles = {90, 45, 135, 0};
  std::string bayer = "rggb";
  std::string resolution = "half";
  std::vector<std::string> outputs = {"s0", "dolp", "aolp"};
  double polarizer_deg = 0;
  double refractive_index = 1.5;
  double min_dolp = 0.02;
};
const ParamSchema<DemosaicParams>& demosaicParamSchema();
// The backends' settings for these parameters; throws std::invalid_argument for a combination
// that has none (full resolution of a colour mosaic, no outputs).
Settings settingsOf(const DemosaicParams& p);

// Size of the outputs for a raw plane `planeWidth` samples (packed formats: bytes) wide, or an error
// message about its size ("" when fine): a packed plane must hold whole groups of pixels.
std::string checkRawSize(const Settings& s, int planeWidth, int rawHeight, int& outWidth, int& outHeight);
// Width in pixels of a raw plane `planeWidth` samples (packed: bytes) wide, and the inverse, for
// whole groups of pixels.
int rawPixelWidth(RawFormat format, int planeWidth);
int rawPlaneWidth(RawFormat format, int pixels);

// The raw frame seen as bytes: u8 planes (mono8 and the packed formats) or u16 planes (mono10, mono12, mono16).
ImageView<const uint8_t> rawBytes(const Image& raw, RawFormat format);

// CPU reference: plain and obviously right.
template <class T>
void demosaicCpu(const Settings& s, ImageView<const uint8_t> raw, int rawWidth, const Planes<T>& out);

// CUDA: one fused pass over the raw frame (device or mapped memory) on `stream`.
template <class T> void demosaicCuda(const Settings& s, ImageView<const uint8_t> raw, int rawWidth,
                                     const Planes<T>& out, StreamHandle stream);

}  // namespace pp::demosaic

namespace pp::demosaic {

// The planes a list of output names ("angles", "s0", ...) produces, in order, with formats.
struct PlaneSpec {
  std::string name;  // angle_0 ... angle_135, s0, s1, s2, dolp, aolp, aolp_visual
  Format format;
};
std::vector<PlaneSpec> planesFor(const Settings& s, const std::vector<std::string>& outputs);

// Runs one backend on named output images (device images for cuda, host or pinned for cpu).
void run(const Settings& s, const Image& raw, const std::map<std::string, Image*>& outputs, bool cuda,
         StreamHandle stream);

// One frame from a host image to host planes, with allocation and copies: for files and tests,
// not the graph. `poison` fills the outputs first so that an unwritten pixel shows; `rowPadding`
// bytes added to the outputs' row pitch give rows that are not 16-byte aligned (a caller's views).
std::map<std::string, Image> runToHost(const Settings& s, const Image& raw, const std::vector<std::string>& outputs,
                                       bool cuda, int poison = -1, size_t rowPadding = 0);

}  // namespace pp::demosaic
