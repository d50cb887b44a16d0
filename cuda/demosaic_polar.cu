#include "cuda/demosaic_polar.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::polar {

namespace {

// Output tile of a colour block, in half-resolution pixels; the raw tile adds a 2-pixel halo of
// each angle's sub-image (the 5x5 window), i.e. 4 raw pixels on every side.
constexpr int kTileW = 32, kTileH = 8;
constexpr int kRawTileW = (kTileW + 4) * 2, kRawTileH = (kTileH + 4) * 2;

// Writes the angle values [angle][channel] of one output pixel and everything derived from them.
template <class T>
__device__ __forceinline__ void finishPixel(const Planes<T>& out, int x, int y, const int (&value)[4][3], int channels, float maxv) {
  Stokes luma{0.f, 0.f, 0.f};
  for (int c = 0; c < channels; ++c) {
    for (int k = 0; k < 4; ++k)
      if (out.angle[k].data) out.angle[k].at(x, y, c) = static_cast<T>(value[k][c]);
    if (out.s0.data) out.s0.at(x, y, c) = static_cast<T>((value[0][c] + value[1][c] + value[2][c] + value[3][c] + 2) >> 2);
    Stokes st = stokes(static_cast<float>(value[0][c]), static_cast<float>(value[1][c]), static_cast<float>(value[2][c]), static_cast<float>(value[3][c]));
    if (out.s1.data) out.s1.at(x, y, c) = st.s1;
    if (out.s2.data) out.s2.at(x, y, c) = st.s2;
    float w = channels == 3 ? lumaWeight(c) : 1.f;
    luma.s0 += w * st.s0, luma.s1 += w * st.s1, luma.s2 += w * st.s2;
  }
  if (!out.dolp.data && !out.aolp.data && !out.aolpVisual.data) return;
  float d = dolp(luma), a = aolp(luma);
  if (out.dolp.data) out.dolp.at(x, y) = d;
  if (out.aolp.data) out.aolp.at(x, y) = a;
  if (out.aolpVisual.data) {
    uint8_t rgb[3];
    aolpVisual(a, d, luma.s0 * 0.5f / maxv, rgb);
    for (int c = 0; c < 3; ++c) out.aolpVisual.at(x, y, c) = rgb[c];
  }
}

// Loads the block's raw tile. Sub-image coordinates are reflected at the borders, so every angle
// keeps its Bayer phase; interior 8-bit tiles are read a 32-bit word at a time without reflection.
__device__ __forceinline__ void loadTile(uint16_t (&tile)[kRawTileH][kRawTileW], const Settings& s, const ImageView<const uint8_t>& raw, int x0, int y0,
                                         int subW, int subH) {
  bool interior = x0 >= 2 && x0 + kTileW + 2 <= subW && y0 >= 2 && y0 + kTileH + 2 <= subH;
  if (interior && s.format == RawFormat::mono8) {
    constexpr int kWords = kRawTileW / 4;
    for (int i = threadIdx.y * kTileW + threadIdx.x; i < kWords * kRawTileH; i += kTileW * kTileH) {
      int ty = i / kWords, tw = i - ty * kWords;
      uint32_t word = reinterpret_cast<const uint32_t*>(raw.row(2 * y0 - 4 + ty) + 2 * x0 - 4)[tw];
#pragma unroll
      for (int b = 0; b < 4; ++b) tile[ty][tw * 4 + b] = static_cast<uint16_t>((word >> (8 * b)) & 0xFF);
    }
    return;
  }
  for (int ty = threadIdx.y; ty < kRawTileH; ty += kTileH) {
    int ry = 2 * reflect101(y0 - 2 + ty / 2, subH) + (ty & 1);
    for (int tx = threadIdx.x; tx < kRawTileW; tx += kTileW)
      tile[ty][tx] = static_cast<uint16_t>(rawSample(raw, s.format, 2 * reflect101(x0 - 2 + tx / 2, subW) + (tx & 1), ry));
  }
}

// Colour sensors: the block stages its raw tile in shared memory; each thread demosaics one
// half-resolution pixel for all four angles with Malvar-He-Cutler, branch-free on the Bayer
// colour. The positions of the polarizer block are unrolled, so every tap is a shared load at a
// constant offset (one 32-bit load serves both positions of a block row); which angle a position
// holds is a run-time select.
template <class T>
__global__ void demosaicColour(Settings s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out) {
  static_assert(kRawTileW % 4 == 0, "whole words per tile row");
  __shared__ __align__(4) uint16_t tile[kRawTileH][kRawTileW];
  int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  loadTile(tile, s, raw, x0, y0, subW, subH);
  __syncthreads();
  int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= subW || y >= subH) return;
  int maxv = maxValue(s.format);
  int here = s.layout.colour(x, y);
  int rowColour = s.layout.colour(x + 1, y);
  bool green = here == G;
  int value[4][3];
#pragma unroll
  for (int oy = 0; oy < 2; ++oy) {
    // Both positions of this block row (ox 0 and 1) sit side by side in the tile: one 32-bit
    // shared load fetches a tap for both.
    const uint32_t* centre = reinterpret_cast<const uint32_t*>(&tile[(threadIdx.y + 2) * 2 + oy][(threadIdx.x + 2) * 2]);
    auto pair = [&](int dx, int dy) { return centre[dy * kRawTileW + dx]; };  // kRawTileW u16 = 2 rows of u32 halves
    uint32_t taps[13] = {pair(0, 0),  pair(-1, 0), pair(1, 0),  pair(0, -1), pair(0, 1),  pair(-2, 0), pair(2, 0),
                         pair(0, -2), pair(0, 2),  pair(-1, -1), pair(1, -1), pair(-1, 1), pair(1, 1)};
#pragma unroll
    for (int ox = 0; ox < 2; ++ox) {
      auto p = [&](int i) { return static_cast<int>((taps[i] >> (16 * ox)) & 0xFFFF); };
      // The four Malvar-He-Cutler kernels of polar_math.hpp (x16), written out over their 13 taps.
      int c = p(0);
      int h1 = p(1) + p(2), v1 = p(3) + p(4);
      int h2 = p(5) + p(6), v2 = p(7) + p(8);
      int diag = p(9) + p(10) + p(11) + p(12);
      int g = 8 * c + 4 * (h1 + v1) - 2 * (h2 + v2);
      int h = 10 * c + 8 * h1 - 2 * h2 - 2 * diag + v2;
      int v = 10 * c + 8 * v1 - 2 * v2 - 2 * diag + h2;
      int d = 12 * c + 4 * diag - 3 * (h2 + v2);
      // At green: H gives the row's colour, V the column's. At red/blue: G, and D the other one.
      int first = mhcResult(green ? h : g, maxv), second = mhcResult(green ? v : d, maxv);
      int r = here == R ? c : green ? (rowColour == R ? first : second) : second;
      int gg = green ? c : first;
      int b = here == B ? c : green ? (rowColour == B ? first : second) : second;
      int k = s.layout.angleAt[oy * 2 + ox];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)  // selects keep value[][] in registers
        if (kk == k) value[kk][0] = r, value[kk][1] = gg, value[kk][2] = b;
    }
  }
  finishPixel(out, x, y, value, 3, static_cast<float>(maxv));
}

// Mono, half resolution: one thread per 2x2 super-pixel.
template <class T>
__global__ void demosaicMonoHalf(Settings s, ImageView<const uint8_t> raw, int outW, int outH, Planes<T> out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= outW || y >= outH) return;
  int value[4][3];
#pragma unroll
  for (int i = 0; i < 4; ++i) value[s.layout.angleAt[i]][0] = rawSample(raw, s.format, 2 * x + (i & 1), 2 * y + (i >> 1));
  finishPixel(out, x, y, value, 1, static_cast<float>(maxValue(s.format)));
}

// Mono, full resolution: each angle at every pixel from its nearest samples, as the CPU does.
template <class T>
__global__ void demosaicMonoFull(Settings s, ImageView<const uint8_t> raw, int outW, int outH, Planes<T> out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= outW || y >= outH) return;
  int subW = outW / 2, subH = outH / 2;
  int value[4][3];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int ox = 0, oy = 0;
    s.layout.offsetOf(k, ox, oy);
    int sx = x - ox, sy = y - oy;
    int xa = sx >> 1, ya = sy >> 1;
    int xb = (sx & 1) ? xa + 1 : xa, yb = (sy & 1) ? ya + 1 : ya;
    int n = (xb != xa ? 2 : 1) * (yb != ya ? 2 : 1);
    auto at = [&](int sxi, int syi) { return rawSample(raw, s.format, 2 * reflect101(sxi, subW) + ox, 2 * reflect101(syi, subH) + oy); };
    int sum = at(xa, ya) + (xb != xa ? at(xb, ya) : 0) + (yb != ya ? at(xa, yb) : 0) + (n == 4 ? at(xb, yb) : 0);
    value[k][0] = (sum + n / 2) / n;
  }
  finishPixel(out, x, y, value, 1, static_cast<float>(maxValue(s.format)));
}

}  // namespace

template <class T>
void launchDemosaic(const Settings& s, ImageView<const uint8_t> raw, int rawWidth, const Planes<T>& out, cudaStream_t stream) {
  if (s.mosaic == Mosaic::rggb) {
    int subW = rawWidth / 2, subH = raw.height / 2;
    dim3 block(kTileW, kTileH), grid((subW + kTileW - 1) / kTileW, (subH + kTileH - 1) / kTileH);
    demosaicColour<T><<<grid, block, 0, stream>>>(s, raw, subW, subH, out);
  } else {
    int outW = s.fullResolution ? rawWidth : rawWidth / 2, outH = s.fullResolution ? raw.height : raw.height / 2;
    dim3 block(32, 8), grid((outW + 31) / 32, (outH + 7) / 8);
    if (s.fullResolution) demosaicMonoFull<T><<<grid, block, 0, stream>>>(s, raw, outW, outH, out);
    else demosaicMonoHalf<T><<<grid, block, 0, stream>>>(s, raw, outW, outH, out);
  }
  PP_CUDA_CHECK_LAUNCH();
}

template void launchDemosaic<uint8_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint8_t>&, cudaStream_t);
template void launchDemosaic<uint16_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint16_t>&, cudaStream_t);

}  // namespace pp::polar
