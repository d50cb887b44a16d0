// The view on the device against the CPU reference: every tile kind (grey, 16-bit through turbo,
// float through HSV, colour), boxes on the first and last tiles, output poisoned first; 8- and 16-bit tiles
// the same, the float tile's bytes within 1; then restyled on the same composer (its colour tables replaced).
#include "stages/compose/compose.hpp"
#include "tests/support.hpp"

namespace pp::compose {
namespace {

TEST(CudaCompose, MatchesTheCpuReference) {
  if (!gpuAvailable()) GTEST_SKIP() << "no CUDA device: " << gpuDescription();
  int w = 77, h = 45;
  std::vector<Image> hostTiles;
  hostTiles.push_back(test::randomImage({Depth::u8, 1}, w, h));
  hostTiles.push_back(test::randomImage({Depth::u16, 1}, w, h));
  hostTiles.push_back(test::randomImage({Depth::f32, 1}, w, h));
  hostTiles.push_back(test::randomImage({Depth::u8, 3}, w, h));
  hostTiles[2].view<float>().at(3, 3) = INFINITY;
  std::vector<TileStyle> styles = {
      {Colormap::gray, 0, true}, {Colormap::turbo, 4000}, {Colormap::hsv, 0}, {Colormap::none, 0, true}};
  Detections boxes = {{10, 5, 20, 20, 3, 0}, {60, 30, 40, 40, 5, 0}};  // the second is clipped
  Image want({Depth::u8, 3}, 2 * w, 2 * h, MemoryKind::host), got(want.format(), 2 * w, 2 * h, MemoryKind::host);
  std::vector<const Image*> hostPointers;
  for (const Image& t : hostTiles) hostPointers.push_back(&t);
  composeCpu(hostPointers, styles, Layout::grid2x2, &boxes, want);

  Stream stream;
  std::vector<Image> deviceTiles;
  std::vector<const Image*> devicePointers;
  for (const Image& t : hostTiles) {
    deviceTiles.emplace_back(t.format(), w, h, MemoryKind::device);
    copyImage(t, deviceTiles.back(), stream.handle());
  }
  for (const Image& t : deviceTiles) devicePointers.push_back(&t);
  Image canvas(want.format(), 2 * w, 2 * h, MemoryKind::device);
  fillBytes(canvas, 0xA5);
  ComposerCuda composer;
  composer.compose(devicePointers, styles, Layout::grid2x2, &boxes, canvas, stream.handle());
  copyImage(canvas, got, stream.handle());
  // Then new styles on the same composer at once, queued behind the first view: the 8- and 16-bit
  // tiles' colour tables are replaced.
  std::vector<TileStyle> restyled = {
      {Colormap::turbo, 200}, {Colormap::gray, 1000, true}, {Colormap::hsv, 0}, {Colormap::gray, 0}};
  Image wantRestyled(want.format(), 2 * w, 2 * h, MemoryKind::host),
      gotRestyled(want.format(), 2 * w, 2 * h, MemoryKind::host);
  composeCpu(hostPointers, restyled, Layout::grid2x2, &boxes, wantRestyled);
  Image canvasRestyled(want.format(), 2 * w, 2 * h, MemoryKind::device);
  fillBytes(canvasRestyled, 0xA5);
  composer.compose(devicePointers, restyled, Layout::grid2x2, &boxes, canvasRestyled, stream.handle());
  copyImage(canvasRestyled, gotRestyled, stream.handle());
  stream.synchronize();
  for (auto [view, reference, name] :
       {std::tuple{&got, &want, "first styles"}, std::tuple{&gotRestyled, &wantRestyled, "restyled"}}) {
    int worst = 0, worstFloat = 0;  // the float tile (bottom left) is computed, the others looked up
    for (int y = 0; y < 2 * h; ++y)
      for (int x = 0; x < 2 * w * 3; ++x) {
        int d = std::abs(view->view<uint8_t>().row(y)[x] - reference->view<uint8_t>().row(y)[x]);
        int& tileWorst = y >= h && x < w * 3 ? worstFloat : worst;
        tileWorst = std::max(tileWorst, d);
      }
    EXPECT_EQ(worst, 0) << name << ": 8- and 16-bit tiles";
    EXPECT_LE(worstFloat, 1) << name << ": the float tile";
  }
}

}  // namespace
}  // namespace pp::compose
