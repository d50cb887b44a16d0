#include "config/params.hpp"
#include "pipeline/registry.hpp"
#include "stages/compose/compose.hpp"

namespace pp::compose {

namespace {

struct ComposeParams {
  std::string layout = "single";
  std::vector<std::string> colormaps;  // per tile, a..d
  std::vector<double> max;             // per tile
  std::vector<std::string> boxes_on = {"a"};
};

const std::vector<std::string> kTiles = {"a", "b", "c", "d"};

class ComposeStage : public Stage {
 public:
  using Params = ComposeParams;
  static const ParamSchema<Params>& schema() {
    static const auto schema =
        ParamSchema<Params>()
            .add("layout", &Params::layout, "single (a), side_by_side (a b), grid2x2 (a b / c d)",
                 oneOf({"single", "side_by_side", "grid2x2"}))
            .add("colormaps", &Params::colormaps, "per tile a, b, c, d: none (grey or colour as is), gray, turbo, hsv",
                 Rule<std::vector<std::string>>{
                     "a list of up to 4 of: none, gray, turbo, hsv",
                     [](const std::vector<std::string>& v) {
                       return v.size() <= 4 && std::all_of(v.begin(), v.end(), [](const std::string& s) {
                                return s == "none" || s == "gray" || s == "turbo" || s == "hsv";
                              });
                     }})
            .add("max", &Params::max,
                 "per tile: the value at the top of the colour map (0: 255, 65535 or 1.0 by depth)",
                 Rule<std::vector<double>>{"a list of up to 4 numbers >= 0",
                                           [](const std::vector<double>& v) {
                                             return v.size() <= 4 &&
                                                    std::all_of(v.begin(), v.end(), [](double x) { return x >= 0; });
                                           }})
            .add("boxes_on", &Params::boxes_on, "the tiles the boxes input is drawn on", listOf(kTiles));
    return schema;
  }

  bool hasCuda() const override { return POLARPIPE_HAS_CUDA; }

  ComposeStage(const Params& p, ParamContext&) {
    layout_ = p.layout == "single"         ? Layout::single
              : p.layout == "side_by_side" ? Layout::side_by_side
                                           : Layout::grid2x2;
    styles_.resize(static_cast<size_t>(tileCount(layout_)));
    for (size_t i = 0; i < styles_.size(); ++i) {
      if (i < p.colormaps.size()) {
        const auto& m = p.colormaps[i];
        styles_[i].colormap = m == "gray"    ? Colormap::gray
                              : m == "turbo" ? Colormap::turbo
                              : m == "hsv"   ? Colormap::hsv
                                             : Colormap::none;
      }
      if (i < p.max.size()) styles_[i].max = p.max[i];
      styles_[i].boxes = std::find(p.boxes_on.begin(), p.boxes_on.end(), kTiles[i]) != p.boxes_on.end();
    }
  }

  void setup(PortSetup& ports) override {
    const std::vector<Format> allowed = {
        {Depth::u8, 1}, {Depth::u16, 1}, {Depth::f32, 1}, {Depth::u8, 3}, {Depth::u8, 4}};
    const PortSpec* first = nullptr;
    for (size_t i = 0; i < styles_.size(); ++i) {
      const PortSpec* spec = ports.imageInput(kTiles[i], allowed);
      if (!spec) continue;
      if (spec->format.channels > 1 && styles_[i].colormap != Colormap::none && styles_[i].colormap != Colormap::gray)
        ports.fail("tile " + kTiles[i] + " is colour (" + ports.upstreamName(kTiles[i]) +
                   "); colour maps need a single-channel plane");
      if (!first)
        first = spec;
      else if (spec->width != first->width || spec->height != first->height)
        ports.fail("tile " + kTiles[i] + " (" + ports.upstreamName(kTiles[i]) + ") is " + std::to_string(spec->width) +
                   "x" + std::to_string(spec->height) + ", tile a is " + std::to_string(first->width) + "x" +
                   std::to_string(first->height) + "; all tiles must have one size");
    }
    if (const PortSpec* boxes = ports.input("boxes", false); boxes && boxes->kind != PortKind::detections)
      ports.fail("input boxes must be detections, but " + ports.upstreamName("boxes") + " is an image");
    if (ports.backend() == Backend::cuda) cuda_ = std::make_unique<ComposerCuda>();
    int cols = columns(layout_), rows = (tileCount(layout_) + cols - 1) / cols;
    if (first) ports.output("image", PortSpec::image({Depth::u8, 3}, first->width * cols, first->height * rows));
  }

  void process(ProcessContext& ctx) override {
    std::vector<const Image*> tiles;
    for (size_t i = 0; i < styles_.size(); ++i) tiles.push_back(&ctx.in(kTiles[i]));
    const Detections* boxes = ctx.connected("boxes") ? &ctx.detectionsIn("boxes") : nullptr;
    if (cuda_)
      cuda_->compose(tiles, styles_, layout_, boxes, ctx.out("image"), ctx.stream());
    else
      composeCpu(tiles, styles_, layout_, boxes, ctx.out("image"));
  }

 private:
  Layout layout_ = Layout::single;
  std::vector<TileStyle> styles_;
  std::unique_ptr<ComposerCuda> cuda_;  // the CUDA backend's colour tables
};

}  // namespace

void registerComposeStage(Registry& registry) {
  registry.add<ComposeStage>(Role::stage, "compose",
                             "the view for the sinks: tiles, colour maps, layouts, face boxes (output image, RGB8)");
}

}  // namespace pp::compose
