#include "stages/compose/compose.hpp"

#include "pipeline/transfer.hpp"
#include "tests/support.hpp"

namespace pp::compose {
namespace {

TEST(Compose, GridPlacesEachTileAndMapsValues) {
  std::vector<Image> tiles;
  for (int i = 0; i < 4; ++i) {
    tiles.emplace_back(Format{Depth::u8, 1}, 5, 3, MemoryKind::host);
    fillBytes(tiles.back(), static_cast<uint8_t>(i * 80));
  }
  Image out(Format{Depth::u8, 3}, 10, 6, MemoryKind::host);
  fillBytes(out, 7);  // poison: every pixel must be written
  composeCpu({&tiles[0], &tiles[1], &tiles[2], &tiles[3]}, {{}, {}, {Colormap::turbo, 0}, {}}, Layout::grid2x2, nullptr,
             out);
  auto v = out.view<uint8_t>();
  EXPECT_EQ(v.at(0, 0, 0), 0);   // a: grey 0
  EXPECT_EQ(v.at(9, 0, 1), 80);  // b: grey 80, top right
  auto t = turbo(160 / 255.0);
  EXPECT_EQ(v.at(0, 5, 0), t[0]);  // c: turbo, bottom left
  EXPECT_EQ(v.at(9, 5, 2), 240);   // d: grey 240
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 10; ++x)
      EXPECT_FALSE(v.at(x, y, 0) == 7 && v.at(x, y, 1) == 7 && v.at(x, y, 2) == 7) << x << "," << y;
}

TEST(Compose, SixteenBitAndFloatPlanesScaleByMax) {
  Image disparity(Format{Depth::u16, 1}, 2, 1, MemoryKind::host);
  disparity.view<uint16_t>().at(0, 0) = 1000;
  disparity.view<uint16_t>().at(1, 0) = 4000;
  Image out(Format{Depth::u8, 3}, 2, 1, MemoryKind::host);
  drawTile(disparity, {Colormap::gray, 2000}, out.view<uint8_t>());
  EXPECT_EQ(out.view<uint8_t>().at(0, 0), 128);
  EXPECT_EQ(out.view<uint8_t>().at(1, 0), 255);  // clamped
  Image depth(Format{Depth::f32, 1}, 1, 1, MemoryKind::host);
  depth.view<float>().at(0, 0) = std::numeric_limits<float>::infinity();
  drawTile(depth, {Colormap::gray, 0}, out.view<uint8_t>());
  EXPECT_EQ(out.view<uint8_t>().at(0, 0), 0) << "invalid (infinite) values show black";
}

TEST(Compose, ColourMapsCoverTheirRange) {
  EXPECT_EQ(hue(0.0), (std::array<uint8_t, 3>{255, 0, 0}));
  EXPECT_EQ(hue(1.0 / 3), (std::array<uint8_t, 3>{0, 255, 0}));
  auto lo = turbo(0.1), hi = turbo(0.9);
  EXPECT_GT(lo[2], lo[0]) << "turbo starts blue";
  EXPECT_GT(hi[0], hi[2]) << "turbo ends red";
}

// The CUDA backend's colour tables are drawTile's colours: every 8- and 16-bit value, each map,
// default and explicit max, grey and colour tiles.
TEST(Compose, ColourTablesAreDrawTilesColours) {
  for (Depth depth : {Depth::u8, Depth::u16})
    for (int channels : {1, 3})
      for (TileStyle style : {TileStyle{Colormap::gray, 0}, TileStyle{Colormap::turbo, 4000},
                              TileStyle{Colormap::hsv, 0}, TileStyle{Colormap::none, 200}}) {
        int values = depth == Depth::u8 ? 256 : 65536, width = 256;
        Image plane({depth, channels}, width, values / width, MemoryKind::host);
        for (int v = 0; v < values; ++v)
          for (int c = 0; c < channels; ++c) {
            if (depth == Depth::u8)
              plane.view<uint8_t>().at(v % width, v / width, c) = static_cast<uint8_t>(v);
            else
              plane.view<uint16_t>().at(v % width, v / width, c) = static_cast<uint16_t>(v);
          }
        Image drawn({Depth::u8, 3}, plane.width(), plane.height(), MemoryKind::host);
        drawTile(plane, style, drawn.view<uint8_t>());
        std::vector<uint8_t> table = colourTable(depth, channels, style);
        ASSERT_EQ(table.size(), static_cast<size_t>(values) * 3);
        int differ = 0;
        for (int v = 0; v < values; ++v)
          for (int c = 0; c < 3; ++c)
            differ += table[static_cast<size_t>(3 * v + c)] != drawn.view<uint8_t>().at(v % width, v / width, c);
        EXPECT_EQ(differ, 0) << "depth " << static_cast<int>(depth) << ", " << channels << " channels, map "
                             << static_cast<int>(style.colormap);
      }
  EXPECT_THROW(colourTable(Depth::f32, 1, {}), std::invalid_argument);
}

TEST(Compose, BoxesAreDrawnAndClipped) {
  Image out(Format{Depth::u8, 3}, 20, 20, MemoryKind::host);
  fillBytes(out, 0);
  drawBoxes(out.view<uint8_t>(), {{5, 5, 10, 10, 3, 0}, {15, 15, 10, 10, 1, 0}});
  auto v = out.view<uint8_t>();
  EXPECT_EQ(v.at(5, 5, 1), 255);
  EXPECT_EQ(v.at(14, 14, 1), 255);
  EXPECT_EQ(v.at(10, 10, 1), 0) << "inside stays";
  EXPECT_EQ(v.at(19, 15, 1), 255) << "the second box is clipped, not skipped";
}

TEST(Transfer, IntegratedGpusReadPinnedMemoryInPlaceDiscreteOnesCopy) {
  EXPECT_TRUE(readableInPlace(MemoryKind::pinned, Backend::cuda, true));
  EXPECT_FALSE(readableInPlace(MemoryKind::pinned, Backend::cuda, false));
  EXPECT_FALSE(readableInPlace(MemoryKind::host, Backend::cuda, true));
  EXPECT_TRUE(readableInPlace(MemoryKind::device, Backend::cuda, false));
  EXPECT_FALSE(readableInPlace(MemoryKind::device, Backend::cpu, true));
  EXPECT_TRUE(readableInPlace(MemoryKind::pinned, Backend::cpu, false));
  EXPECT_EQ(outputMemory(Backend::cuda, true), MemoryKind::device);
  EXPECT_EQ(outputMemory(Backend::cpu, true), MemoryKind::pinned);
  EXPECT_EQ(outputMemory(Backend::cpu, false), MemoryKind::host);
}

// Boxes go on the tiles whose style asks for them (boxes_on), and only there.
TEST(Compose, BoxesAreDrawnOnTheTilesAskedFor) {
  Image tile({Depth::u8, 1}, 40, 30, MemoryKind::host);
  fillBytes(tile, 100);
  Detections boxes = {{5, 5, 20, 15, 3, 0}};
  Image plain({Depth::u8, 3}, 80, 30, MemoryKind::host), boxed(plain.format(), 80, 30, MemoryKind::host);
  composeCpu({&tile, &tile}, {{}, {}}, Layout::side_by_side, &boxes, plain);
  composeCpu({&tile, &tile}, {{}, {Colormap::none, 0, true}}, Layout::side_by_side, &boxes, boxed);
  auto changed = [&](int x0) {
    int n = 0;
    for (int y = 0; y < 30; ++y)
      for (int x = x0; x < x0 + 40; ++x) n += plain.view<uint8_t>().at(x, y, 1) != boxed.view<uint8_t>().at(x, y, 1);
    return n;
  };
  EXPECT_EQ(changed(0), 0) << "tile a has no boxes";
  EXPECT_GT(changed(40), 50) << "tile b has them";
}

}  // namespace
}  // namespace pp::compose
