// Source `stereo_synth`: a stereo pair of raw polarization frames from a rectified picture pair,
// with an overlay (a face) pasted at a known disparity in front of it, moving a little each frame,
// and the AoLP field turning. The demo runs on it: no cameras, known truth.
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
            .add("frames", &Params::frames, "frames to produce (each one made at start)", intIn(1, 1000))
            .add("loop", &Params::loop, "start again after the last frame (until stopped)")
            .add("fps", &Params::fps,
                 "frames per second, as a camera delivers them; 0: as fast as the graph takes them", numberIn(0, 10000))
            .add("aolp_step_deg", &Params::aolp_step_deg, "AoLP turn per frame, degrees", numberIn(-180, 180));
    return schema;
  }

  StereoSynthSource(const Params& p, ParamContext& ctx) : mosaic_(p.mosaic), loop_(p.loop), fps_(p.fps) {
    try {
      Image left = shrink(readImage(p.left.value), p.downscale), right = shrink(readImage(p.right.value), p.downscale);
      if (left.width() != right.width() || left.height() != right.height() || left.format() != right.format())
        throw std::invalid_argument(p.left.value + " and " + p.right.value + " differ in size or format");
      if (p.size[0] > 0 && p.size[1] > 0) {
        left = resized(left, p.size[0], p.size[1]);
        right = resized(right, p.size[0], p.size[1]);
      }
      Image overlay;
      std::vector<int> crop = p.overlay_crop;
      if (!p.overlay.empty()) {
        overlay = readImage(p.overlay.value);
        if (crop[2] == 0) crop = {0, 0, overlay.width(), overlay.height()};
        if (crop[0] + crop[2] > overlay.width() || crop[1] + crop[3] > overlay.height())
          throw std::invalid_argument("overlay_crop reaches outside the " + std::to_string(overlay.width()) + "x" +
                                      std::to_string(overlay.height()) + " overlay " + p.overlay.value);
      }
      demosaic::SynthOptions o;
      o.mosaic = p.mosaic == "polar_mono" ? demosaic::Mosaic::mono : demosaic::Mosaic::rggb;
      o.aolp = "radial";
      o.dolp = "ramp";
      for (int i = 0; i < p.frames; ++i) {
        Image l(left.format(), left.width(), left.height(), MemoryKind::host),
            r(left.format(), left.width(), left.height(), MemoryKind::host);
        copyImage(left, l, nullptr);
        copyImage(right, r, nullptr);
        if (!overlay.empty()) {
          int x = p.overlay_at[0] + i * p.overlay_step[0], y = p.overlay_at[1] + i * p.overlay_step[1];
          paste(l, overlay, crop, x, y);
          paste(r, overlay, crop, x - p.overlay_disparity, y);
        }
        o.aolpOffset = i * p.aolp_step_deg * M_PI / 180.0;
        frames_.push_back({demosaic::synthesize(l, o).raw, demosaic::synthesize(r, o).raw});
      }
    } catch (const std::exception& e) {
      ctx.error(e.what());
    }
  }

  void setup(PortSetup& ports) override {
    if (frames_.empty()) return;
    const Image& raw = frames_.front()[0];
    ports.output("left", PortSpec::image(raw.format(), raw.width(), raw.height()));
    ports.output("right", PortSpec::image(raw.format(), raw.width(), raw.height()));
  }
  bool live() const override { return false; }
  bool read(SourceFrame& frame, const std::function<bool()>& stopping) override {
    if (next_ == frames_.size()) {
      if (!loop_) return false;
      next_ = 0;
    }
    if (fps_ > 0) {  // paced like a camera
      if (due_ == Clock::time_point{}) due_ = Clock::now();
      while (Clock::now() < due_ && !stopping())
        std::this_thread::sleep_for(std::min<Clock::duration>(due_ - Clock::now(), std::chrono::milliseconds(5)));
      if (stopping()) return false;
      due_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps_));
    }
    copyImage(frames_[next_][0], frame.out("left"), nullptr);
    copyImage(frames_[next_][1], frame.out("right"), nullptr);
    frame.meta().mosaic = mosaic_;
    frame.meta().bitDepth = 8;
    ++next_;
    return true;
  }

 private:
  std::string mosaic_;
  bool loop_;
  double fps_;
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
