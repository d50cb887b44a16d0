// Source `stereo_synth`: a stereo pair of raw polarization frames from a rectified picture pair,
// with an overlay (a face) pasted at a known disparity in front of it, moving a little each frame,
// and the AoLP field turning. The demo runs on it: no cameras, known truth.
#include <array>
#include <thread>

#include "pipeline/image_io.hpp"
#include "pipeline/registry.hpp"
#include "stages/demosaic/synth.hpp"
#include "stages/faces/faces.hpp"

namespace pp::stereo {

namespace {

struct StereoSynthParams {
  Path left, right, overlay;
  int downscale = 1;
  std::vector<int> size = {0, 0};
  std::vector<int> overlay_crop = {0, 0, 0, 0};  // x, y, w, h in the overlay picture; w 0: all of it
  std::vector<int> overlay_at = {0, 0};          // where its top-left lands in the left picture (after downscale)
  int overlay_disparity = 0;
  std::vector<int> overlay_step = {0, 0};  // its motion per frame
  std::string mosaic = "polar_mono";
  int frames = 24;
  bool loop = false;
  double fps = 0;
  double aolp_step_deg = 5;
};

// The picture averaged over factor x factor blocks (8-bit, 1 or 3 channels).
Image shrink(const Image& picture, int factor) {
  int w = picture.width() / factor, h = picture.height() / factor, c = picture.format().channels;
  Image out(picture.format(), w, h, MemoryKind::host);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) {
        int sum = 0;
        for (int j = 0; j < factor; ++j)
          for (int i = 0; i < factor; ++i) sum += picture.view<uint8_t>().at(x * factor + i, y * factor + j, k);
        out.view<uint8_t>().at(x, y, k) = static_cast<uint8_t>((sum + factor * factor / 2) / (factor * factor));
      }
  return out;
}

// Bilinear resize of an 8-bit picture, channel by channel (faces::resizeExact is OpenCV's).
Image resized(const Image& picture, int width, int height) {
  int c = picture.format().channels;
  Image out(picture.format(), width, height, MemoryKind::host);
  for (int k = 0; k < c; ++k) {
    Image plane({Depth::u8, 1}, picture.width(), picture.height(), MemoryKind::host),
        small({Depth::u8, 1}, width, height, MemoryKind::host);
    for (int y = 0; y < picture.height(); ++y)
      for (int x = 0; x < picture.width(); ++x) plane.view<uint8_t>().at(x, y) = picture.view<uint8_t>().at(x, y, k);
    faces::resizeExact(plane, small);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) out.view<uint8_t>().at(x, y, k) = small.view<uint8_t>().at(x, y);
  }
  return out;
}

// Pastes crop [cx, cy, cw, ch] of `overlay` with its top-left at (x, y); parts outside are cut.
void paste(Image& picture, const Image& overlay, const std::vector<int>& crop, int x, int y) {
  for (int j = 0; j < crop[3]; ++j)
    for (int i = 0; i < crop[2]; ++i) {
      int px = x + i, py = y + j;
      if (px < 0 || py < 0 || px >= picture.width() || py >= picture.height()) continue;
      for (int k = 0; k < picture.format().channels; ++k)
        picture.view<uint8_t>().at(px, py, k) =
            overlay.view<uint8_t>().at(crop[0] + i, crop[1] + j, overlay.format().channels == 1 ? 0 : k);
    }
}

class StereoSynthSource : public Source {
 public:
  using Params = StereoSynthParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("left", &Params::left, "left picture of a rectified pair (8-bit)", existingFile())
            .add("right", &Params::right, "right picture, the left's size", existingFile())
            .add("downscale", &Params::downscale, "average the pair over NxN blocks first", intIn(1, 8))
            .add("size", &Params::size,
                 "[w, h]: then resize the pair to this (bilinear; the raw frames are twice it); [0, 0]: keep",
                 intListOf(2, 0, 1 << 15))
            .add("overlay", &Params::overlay, "picture pasted in front of the pair (optional)", existingFile())
            .add("overlay_crop", &Params::overlay_crop, "[x, y, w, h] of the overlay picture to paste; w 0: all of it",
                 intListOf(4, 0, 1 << 16))
            .add("overlay_at", &Params::overlay_at,
                 "[x, y] of the overlay's top-left in the left picture (after downscale)",
                 intListOf(2, -(1 << 16), 1 << 16))
            .add("overlay_disparity", &Params::overlay_disparity,
                 "the overlay's disparity: in the right picture it sits this far left", intIn(0, 4096))
            .add("overlay_step", &Params::overlay_step, "[dx, dy] the overlay moves each frame",
                 intListOf(2, -1000, 1000))
            .add("mosaic", &Params::mosaic, "sensor layout of the raw frames", oneOf({"polar_rggb", "polar_mono"}))
            .add("frames", &Params::frames, "frames to produce (each one made before the graph runs)", intIn(1, 1000))
            .add("loop", &Params::loop, "start again after the last frame (until stopped)")
            .add("fps", &Params::fps,
                 "frames per second, as a camera delivers them; 0: as fast as the graph takes them", numberIn(0, 10000))
            .add("aolp_step_deg", &Params::aolp_step_deg, "AoLP turn per frame, degrees", numberIn(-180, 180));
    return schema;
  }

  StereoSynthSource(const Params& p, ParamContext& ctx) : p_(p) {
    try {
      left_ = shrink(readImage(p.left.value), p.downscale), right_ = shrink(readImage(p.right.value), p.downscale);
      if (left_.width() != right_.width() || left_.height() != right_.height() || left_.format() != right_.format())
        throw std::invalid_argument(p.left.value + " and " + p.right.value + " differ in size or format");
      if (p.size[0] > 0 && p.size[1] > 0) {
        left_ = resized(left_, p.size[0], p.size[1]);
        right_ = resized(right_, p.size[0], p.size[1]);
      }
      if (!p.overlay.empty()) {
        overlay_ = readImage(p.overlay.value);
        std::vector<int>& crop = p_.overlay_crop;
        if (crop[2] == 0) crop = {0, 0, overlay_.width(), overlay_.height()};
        if (crop[0] + crop[2] > overlay_.width() || crop[1] + crop[3] > overlay_.height())
          throw std::invalid_argument("overlay_crop reaches outside the " + std::to_string(overlay_.width()) + "x" +
                                      std::to_string(overlay_.height()) + " overlay " + p.overlay.value);
      }
    } catch (const std::exception& e) {
      left_ = {};
      ctx.error(e.what());
    }
  }

  // Every frame is made here where the graph will run, so that a paced source delivers them at its
  // rate; a graph built to validate makes the first alone, for its size.
  void setup(PortSetup& ports) override {
    if (left_.empty()) return;
    const int count = ports.devices() == PortSetup::Devices::use ? p_.frames : 1;
    while (static_cast<int>(frames_.size()) < count) frames_.push_back(render(static_cast<int>(frames_.size())));
    const Image& raw = frames_.front()[0];
    ports.output("left", PortSpec::image(raw.format(), raw.width(), raw.height()));
    ports.output("right", PortSpec::image(raw.format(), raw.width(), raw.height()));
  }
  bool live() const override { return false; }
  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    if (next_ == frames_.size()) {
      if (!p_.loop) return false;
      next_ = 0;
    }
    if (p_.fps > 0) {  // paced like a camera
      if (due_ == Clock::time_point{}) due_ = Clock::now();
      while (Clock::now() < due_ && !stopping())
        std::this_thread::sleep_for(std::min<Clock::duration>(due_ - Clock::now(), std::chrono::milliseconds(5)));
      if (stopping()) return false;
      due_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / p_.fps));
    }
    copyImage(frames_[next_][0], frame.out("left"), nullptr);
    copyImage(frames_[next_][1], frame.out("right"), nullptr);
    frame.meta().mosaic = p_.mosaic;
    frame.meta().bitDepth = 8;
    ++next_;
    return true;
  }

 private:
  // Frame i: the pair with the overlay moved i steps, the AoLP field turned i steps, as raw mosaics.
  std::array<Image, 2> render(int i) const {
    Image l(left_.format(), left_.width(), left_.height(), MemoryKind::host),
        r(left_.format(), left_.width(), left_.height(), MemoryKind::host);
    copyImage(left_, l, nullptr);
    copyImage(right_, r, nullptr);
    if (!overlay_.empty()) {
      const int x = p_.overlay_at[0] + i * p_.overlay_step[0], y = p_.overlay_at[1] + i * p_.overlay_step[1];
      paste(l, overlay_, p_.overlay_crop, x, y);
      paste(r, overlay_, p_.overlay_crop, x - p_.overlay_disparity, y);
    }
    demosaic::SynthOptions o;
    o.mosaic = p_.mosaic == "polar_mono" ? demosaic::Mosaic::mono : demosaic::Mosaic::rggb;
    o.aolp = "radial";
    o.dolp = "ramp";
    o.aolpOffset = i * p_.aolp_step_deg * M_PI / 180.0;
    return {demosaic::synthesize(l, o).raw, demosaic::synthesize(r, o).raw};
  }

  Params p_;  // overlay_crop made whole where it was all of the overlay
  Image left_, right_, overlay_;
  Clock::time_point due_{};
  std::vector<std::array<Image, 2>> frames_;  // left and right raw
  size_t next_ = 0;
};

}  // namespace

void registerStereoSynthSource(Registry& registry) {
  registry.add<StereoSynthSource>(Role::source, "stereo_synth",
                                  "raw polarization stereo pairs from a rectified picture pair with an overlay at a "
                                  "known disparity (outputs left, right)");
}

}  // namespace pp::stereo
