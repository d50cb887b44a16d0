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

// Colour sensors: the block stages its raw tile (reflected at the borders in sub-image space, so
// every angle keeps its Bayer phase) in shared memory; each thread demosaics one half-resolution
// pixel for all four angles with Malvar-He-Cutler, branch-free on the Bayer colour.
template <class T>
__global__ void demosaicColour(Settings s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out) {
  __shared__ uint16_t tile[kRawTileH][kRawTileW];
  int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  int tid = threadIdx.y * kTileW + threadIdx.x;
  for (int i = tid; i < kRawTileW * kRawTileH; i += kTileW * kTileH) {
    int ty = i / kRawTileW, tx = i % kRawTileW;
    int rx = 2 * reflect101(x0 - 2 + tx / 2, subW) + (tx & 1);
    int ry = 2 * reflect101(y0 - 2 + ty / 2, subH) + (ty & 1);
    tile[ty][tx] = static_cast<uint16_t>(rawSample(raw, s.format, rx, ry));
  }
  __syncthreads();
  int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= subW || y >= subH) return;
  int maxv = maxValue(s.format);
  int here = s.layout.colour(x, y);
  int rowColour = s.layout.colour(x + 1, y);
  bool green = here == G;
  int value[4][3];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int ox = 0, oy = 0;
    s.layout.offsetOf(k, ox, oy);
    auto p = [&](int dx, int dy) { return static_cast<int>(tile[(threadIdx.y + 2 + dy) * 2 + oy][(threadIdx.x + 2 + dx) * 2 + ox]); };
    // The four Malvar-He-Cutler kernels of polar_math.hpp (x16), written out over their 13 taps.
    int c = p(0, 0);
    int h1 = p(-1, 0) + p(1, 0), v1 = p(0, -1) + p(0, 1);
    int h2 = p(-2, 0) + p(2, 0), v2 = p(0, -2) + p(0, 2);
    int diag = p(-1, -1) + p(1, -1) + p(-1, 1) + p(1, 1);
    int g = 8 * c + 4 * (h1 + v1) - 2 * (h2 + v2);
    int h = 10 * c + 8 * h1 - 2 * h2 - 2 * diag + v2;
    int v = 10 * c + 8 * v1 - 2 * v2 - 2 * diag + h2;
    int d = 12 * c + 4 * diag - 3 * (h2 + v2);
    // At green: H gives the row's colour, V the column's. At red/blue: G, and D the other one.
    int first = mhcResult(green ? h : g, maxv), second = mhcResult(green ? v : d, maxv);
    // Selects rather than value[k][colour] = ...: constant indices keep the array in registers.
    value[k][R] = here == R ? c : green ? (rowColour == R ? first : second) : second;
    value[k][G] = green ? c : first;
    value[k][B] = here == B ? c : green ? (rowColour == B ? first : second) : second;
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
