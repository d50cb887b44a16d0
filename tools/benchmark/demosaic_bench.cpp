// tools/bench cases demosaic/*: the fused pass on a raw frame of --size, one frame at a time and
// 32 back to back; bytes moved = the raw frame read once + every requested plane written once.
#include <random>

#include "stages/demosaic/demosaic.hpp"
#include "tools/benchmark/bench.hpp"

namespace pp::demosaic {
namespace {

class DemosaicRun : public bench::Run {
 public:
  DemosaicRun(Mosaic mosaic, RawFormat format, bool topBits, std::vector<std::string> outputs, bench::Size size,
              int sets, bool cuda)
      : cuda_(cuda) {
    s_.mosaic = mosaic;
    s_.format = format;
    if (topBits) s_.sampleShift = static_cast<uint8_t>(polar::sampleBits(format) - 8);
    int w = size.width / 4 * 4, h = size.height / 4 * 4;
    MemoryKind memory = cuda ? MemoryKind::device : MemoryKind::host;
    std::mt19937 rng(7);
    bool wide = polar::isWide(format);
    int rawWidth = rawPlaneWidth(format, w);  // packed: the camera's bytes as a u8 plane
    Image host(Format{wide ? Depth::u16 : Depth::u8, 1}, rawWidth, h, MemoryKind::host);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < rawWidth; ++x)
        if (wide)
          host.view<uint16_t>().at(x, y) =
              static_cast<uint16_t>(rng() & static_cast<unsigned>(polar::maxValue(format)));
        else
          host.view<uint8_t>().at(x, y) = static_cast<uint8_t>(rng());
    bytes_ = static_cast<double>(pixelBytes(host.format())) * rawWidth * h;
    for (int i = 0; i < sets; ++i) {
      raws_.emplace_back(host.format(), rawWidth, h, memory);
      copyImage(host, raws_.back(), nullptr);
      outputs_.emplace_back();
      for (const auto& p : planesFor(s_, outputs)) {
        Image& img = outputs_.back().emplace(p.name, Image(p.format, w / 2, h / 2, memory)).first->second;
        if (i == 0) bytes_ += static_cast<double>(pixelBytes(p.format)) * img.width() * img.height();
      }
    }
    pixels_ = static_cast<double>(w) * h;
  }
  void iterate(int index, StreamHandle stream) override {
    std::map<std::string, Image*> out;
    for (auto& [name, img] : outputs_[static_cast<size_t>(index)]) out[name] = &img;
    run(s_, raws_[static_cast<size_t>(index)], out, cuda_, stream);
  }
  double bytesMoved() const override { return bytes_; }
  double pixels() const override { return pixels_; }

 private:
  Settings s_;
  bool cuda_;
  std::vector<Image> raws_;
  std::vector<std::map<std::string, Image>> outputs_;
  double bytes_ = 0, pixels_ = 0;
};

// topBits: depth u8 (8-bit planes from the samples' top 8 bits).
void add(const std::string& name, Mosaic mosaic, std::vector<std::string> outputs, const std::string& summary,
         RawFormat format = RawFormat::mono8, bool topBits = false) {
  bench::registry().push_back({"demosaic/" + name, summary, true, [=](bench::Size size, int sets) {
                                 return std::make_unique<DemosaicRun>(mosaic, format, topBits, outputs, size, sets,
                                                                      true);
                               }});
  bench::registry().push_back(
      {"demosaic/" + name + "/cpu", summary + " (CPU reference)", false, [=](bench::Size size, int) {
         return std::make_unique<DemosaicRun>(mosaic, format, topBits, outputs, size, 1, false);
       }});
}

[[maybe_unused]] const bool registered = [] {
  add("rggb8-angles", Mosaic::rggb, {"angles"}, "8-bit colour raw: four MHC-demosaiced RGB angle images");
  add("rggb8-s0-dolp-aolp", Mosaic::rggb, {"s0", "dolp", "aolp"}, "8-bit colour raw: S0, DoLP, AoLP");
  add("rggb8-s0-dolp-aolp-min-polarizer", Mosaic::rggb, {"s0", "dolp", "aolp", "min", "polarizer"},
      "8-bit colour raw: S0, DoLP, AoLP and the reflection-suppressed and virtual polarizer images");
  add("rggb8-all", Mosaic::rggb, outputNames(), "8-bit colour raw: every output");
  add("mono8-angles", Mosaic::mono, {"angles"}, "8-bit mono raw: four angle images (super-pixel)");
  add("mono8-s0-dolp-aolp", Mosaic::mono, {"s0", "dolp", "aolp"}, "8-bit mono raw: S0, DoLP, AoLP (super-pixel)");
  add("mono8-min-normals", Mosaic::mono, {"min", "normals", "normals_visual"},
      "8-bit mono raw: reflection suppressed and surface normals (super-pixel)");
  add("rggb12-angles", Mosaic::rggb, {"angles"},
      "12-bit colour raw (16-bit samples): four MHC-demosaiced RGB16 angle images", RawFormat::mono12);
  add("rggb12p-angles", Mosaic::rggb, {"angles"},
      "12-bit packed colour raw (Mono12p as a camera sends it, unpacked in the read): four RGB16 angle images",
      RawFormat::mono12p);
  add("rggb12p-s0-dolp-aolp", Mosaic::rggb, {"s0", "dolp", "aolp"},
      "12-bit packed colour raw (unpacked in the read): S0, DoLP, AoLP", RawFormat::mono12p);
  add("rggb12p-angles-u8", Mosaic::rggb, {"angles"},
      "12-bit packed colour raw (unpacked in the read) with depth u8: four RGB8 angle images from the samples' top 8 "
      "bits",
      RawFormat::mono12p, true);
  add("rggb12p-s0-dolp-aolp-u8", Mosaic::rggb, {"s0", "dolp", "aolp"},
      "12-bit packed colour raw (unpacked in the read) with depth u8: S0, DoLP, AoLP", RawFormat::mono12p, true);
  add("rggb10p-angles", Mosaic::rggb, {"angles"},
      "10-bit PFNC-packed colour raw (Mono10p, read sample by sample): four RGB16 angle images", RawFormat::mono10p);
  add("rggb12packed-angles", Mosaic::rggb, {"angles"},
      "12-bit GigE Vision-packed colour raw (Mono12Packed, read sample by sample): four RGB16 angle images",
      RawFormat::mono12packed);
  add("mono12p-s0-dolp-aolp", Mosaic::mono, {"s0", "dolp", "aolp"},
      "12-bit packed mono raw (unpacked in the read): S0, DoLP, AoLP (super-pixel)", RawFormat::mono12p);
  return true;
}();

}  // namespace
}  // namespace pp::demosaic
