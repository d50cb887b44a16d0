#include "cuda/demosaic_polar.cuh"
#include "pipeline/cuda_check.hpp"

namespace pp::polar {

namespace {

// Colour blocks: 32x4 threads, each demosaicing a 2x2 quad of half-resolution pixels, so the
// Bayer colour of each of its pixels is known at compile time. A block covers 64x8 pixels; its raw
// tile adds a 2-pixel halo of each angle's sub-image (the 5x5 window): 136x24 samples. (32x8
// threads were 2% slower on an H100; a thread taking two quads, 9%.)
constexpr int kThreadsX = 32, kThreadsY = 4;
constexpr int kTileW = 2 * kThreadsX, kTileH = 2 * kThreadsY;
constexpr int kRawTileW = (kTileW + 4) * 2, kRawTileH = (kTileH + 4) * 2;
// 8-bit tiles are copied in 16-byte chunks from the aligned address 12 bytes before the tile's
// first sample (2 * x0 - 4, where x0 is a multiple of 64), so their rows start at column 12 of a
// 160-byte row; 16-bit tiles are copied sample by sample.
template <class T> constexpr int kTileSkew = sizeof(T) == 1 ? 12 : 0;
template <class T> constexpr int kTileStride = sizeof(T) == 1 ? 160 : kRawTileW;
static_assert(kTileStride<uint8_t> % 16 == 0 && kTileStride<uint8_t> >= kTileSkew<uint8_t> + kRawTileW, "16-byte tile rows");

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
  storePolarization(out, x, y, luma, maxv);
}

// A tile coordinate reflected into the sub-image; in a sub-image smaller than the tile, those that
// one reflection leaves outside feed no output and are only kept from reading outside the frame.
__device__ __forceinline__ int tileSource(int i, int n) { return min(max(reflect101(i, n), 0), n - 1); }

// Loads the block's raw tile, samples as T (8-bit raw: bytes, so that the threads of a warp read
// one shared-memory word each; wider raw: 16 bits), tile row ty's sample tx at
// tile[ty][kTileSkew + tx]. Sub-image coordinates are reflected at the borders, so every angle
// keeps its Bayer phase. 8-bit tiles of 16-byte aligned frames are copied 16 bytes at a time from
// their (reflected) rows; only the columns beyond a row's ends that a pixel's window reaches are
// read sample by sample. (Border blocks reading every sample so took 45% of the warps' time.)
template <class T>
__device__ __forceinline__ void loadTile(T (&tile)[kRawTileH][kTileStride<T>], const Settings& s, const ImageView<const uint8_t>& raw, int x0, int y0, int subW,
                                         int subH) {
  constexpr int skew = kTileSkew<T>, kThreads = kThreadsX * kThreadsY;
  int tid = threadIdx.y * kThreadsX + threadIdx.x;
  auto sourceRow = [&](int ty) { return 2 * tileSource(y0 - 2 + ty / 2, subH) + (ty & 1); };
  auto loadSample = [&](int ty, int tx, int rawRow) {
    tile[ty][skew + tx] = static_cast<T>(rawSample(raw, s.format, 2 * tileSource(x0 - 2 + tx / 2, subW) + (tx & 1), rawRow));
  };
  if constexpr (sizeof(T) == 1) {
    if (raw.rowsAligned(16)) {
      constexpr int kChunks = kTileStride<T> / 16;
      int first = 2 * x0 - 4 - skew, rowBytes = 2 * subW;  // the raw byte at the tile row's start (16-byte aligned)
      for (int i = tid; i < kChunks * kRawTileH; i += kThreads) {
        int ty = i / kChunks, chunk = i - ty * kChunks, byte = first + 16 * chunk;
        if (byte >= 0 && byte + 16 <= rowBytes) reinterpret_cast<uint4*>(tile[ty])[chunk] = *reinterpret_cast<const uint4*>(raw.row(sourceRow(ty)) + byte);
      }
      // Tile columns left of the row, and right of its last whole chunk up to the column a window
      // of the last pixel reaches (sub-image x = subW + 1); further columns feed no output.
      int leftEnd = min(max(4 - 2 * x0, 0), kRawTileW);
      int rightBegin = min(max((rowBytes & ~15) - (2 * x0 - 4), leftEnd), kRawTileW);
      int rightEnd = min(max(2 * (subW + 4 - x0), rightBegin), kRawTileW);
      int columns = leftEnd + rightEnd - rightBegin;
      for (int i = tid; i < columns * kRawTileH; i += kThreads) {
        int ty = i / columns, k = i - ty * columns;
        loadSample(ty, k < leftEnd ? k : rightBegin + k - leftEnd, sourceRow(ty));
      }
      return;
    }
  }
  for (int ty = threadIdx.y; ty < kRawTileH; ty += kThreadsY) {
    int rawRow = sourceRow(ty);
    for (int tx = threadIdx.x; tx < kRawTileW; tx += kThreadsX) loadSample(ty, tx, rawRow);
  }
}

// How the block positions (row-major in the 2x2 polarizer block) map to Stokes: S1 = I0 - I90 and
// S2 = I45 - I135 as weights per position, set on the host from the layout.
struct PositionWeights {
  float s1[4], s2[4];
};

// Malvar-He-Cutler at one pixel whose colour is Here (compile time); p(dx, dy) reads its sub-image.
// Row and Col are the colours of its horizontal and vertical neighbours.
template <int Here, int Row, int Col, class P>
__device__ __forceinline__ void mhcPixel(const P& p, int maxv, int (&rgb)[3]) {
  int c = p(0, 0);
  int h2 = p(-2, 0) + p(2, 0), v2 = p(0, -2) + p(0, 2);
  rgb[Here] = c;
  if constexpr (Here == G) {  // the kernels of polar_math.hpp, x16, over their taps
    int h1 = p(-1, 0) + p(1, 0), v1 = p(0, -1) + p(0, 1);
    int diag = p(-1, -1) + p(1, -1) + p(-1, 1) + p(1, 1);
    rgb[Row] = mhcResult(10 * c + 8 * h1 - 2 * h2 - 2 * diag + v2, maxv);
    rgb[Col] = mhcResult(10 * c + 8 * v1 - 2 * v2 - 2 * diag + h2, maxv);
  } else {
    int cross = p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1);
    int diag = p(-1, -1) + p(1, -1) + p(-1, 1) + p(1, 1);
    rgb[G] = mhcResult(8 * c + 4 * cross - 2 * (h2 + v2), maxv);
    rgb[Here == R ? B : R] = mhcResult(12 * c + 4 * diag - 3 * (h2 + v2), maxv);
  }
}

// Writes a block's staged RGB rows to `plane`: whole 16-byte chunks when the block is inside the
// image and the plane's rows are 16-byte aligned (then so is the block's part: x0 * 3 samples is
// a multiple of 192), else sample by sample.
template <class T>
__device__ __forceinline__ void storeStaged(const T (&staged)[kTileH][kTileW * 3], const ImageView<T>& plane, int x0, int y0, int subW, int subH) {
  int tid = threadIdx.y * kThreadsX + threadIdx.x;
  if (x0 + kTileW <= subW && y0 + kTileH <= subH && plane.rowsAligned(16)) {
    constexpr int kChunks = kTileW * 3 * static_cast<int>(sizeof(T)) / 16;  // per row
    for (int i = tid; i < kChunks * kTileH; i += kThreadsX * kThreadsY) {
      int row = i / kChunks, chunk = i - row * kChunks;
      reinterpret_cast<uint4*>(plane.row(y0 + row) + x0 * 3)[chunk] = reinterpret_cast<const uint4*>(staged[row])[chunk];
    }
    return;
  }
  int rows = min(kTileH, subH - y0), samples = min(kTileW, subW - x0) * 3;
  for (int i = tid; i < rows * kTileW * 3; i += kThreadsX * kThreadsY) {
    int row = i / (kTileW * 3), column = i - row * kTileW * 3;
    if (column < samples) plane.row(y0 + row)[x0 * 3 + column] = staged[row][column];
  }
}

// Colour sensors. C00..C11: the Bayer colours of the quad (template, so nothing is selected at
// run time). `out.angle` is in block-position order (the launcher reorders it). Every position's
// RGB rows are staged, then written out after one barrier; Stokes sums are kept only when a Stokes
// plane is wanted.
template <int C00, int C10, int C01, int C11, bool Stokes, class T>
__global__ void __launch_bounds__(kThreadsX* kThreadsY) demosaicColour(Settings s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out,
                                                                        PositionWeights weights) {
  __shared__ __align__(16) T tile[kRawTileH][kTileStride<T>];
  __shared__ __align__(16) T staged[4][kTileH][kTileW * 3];  // each angle's RGB rows, written out 16 bytes at a time
  int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  loadTile(tile, s, raw, x0, y0, subW, subH);
  __syncthreads();
  int x = x0 + 2 * threadIdx.x, y = y0 + 2 * threadIdx.y;  // the quad's top-left pixel
  bool inside = x < subW && y < subH;                       // sub-image sizes are even
  int maxv = sizeof(T) == 1 ? 255 : maxValue(s.format);  // 8-bit samples are mono8: a constant for the clamps
  int sum[4][3] = {}, s1[4][3] = {}, s2[4][3] = {};          // [quad pixel][channel], scaled below
  float w1[4], w2[4];
#pragma unroll
  for (int position = 0; position < 4; ++position) w1[position] = weights.s1[position], w2[position] = weights.s2[position];
#pragma unroll
  for (int position = 0; position < 4; ++position) {
    const T* origin = &tile[(2 * threadIdx.y + 2) * 2 + (position >> 1)][kTileSkew<T> + (2 * threadIdx.x + 2) * 2 + (position & 1)];
    int rgb[4][3];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      int qx = q & 1, qy = q >> 1;
      auto p = [&](int dx, int dy) { return static_cast<int>(origin[(qy + dy) * 2 * kTileStride<T> + (qx + dx) * 2]); };
      if (q == 0) mhcPixel<C00, C10, C01>(p, maxv, rgb[q]);
      if (q == 1) mhcPixel<C10, C00, C11>(p, maxv, rgb[q]);
      if (q == 2) mhcPixel<C01, C11, C00>(p, maxv, rgb[q]);
      if (q == 3) mhcPixel<C11, C01, C10>(p, maxv, rgb[q]);
    }
    if (out.angle[position].data && inside)
#pragma unroll
      for (int qy = 0; qy < 2; ++qy)
#pragma unroll
        for (int i = 0; i < 6; ++i) staged[position][2 * threadIdx.y + qy][2 * threadIdx.x * 3 + i] = static_cast<T>(rgb[qy * 2 + i / 3][i % 3]);
    if constexpr (Stokes) {
      if (!inside) continue;
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int c = 0; c < 3; ++c) {
          sum[q][c] += rgb[q][c];
          s1[q][c] += static_cast<int>(w1[position]) * rgb[q][c];
          s2[q][c] += static_cast<int>(w2[position]) * rgb[q][c];
        }
    }
  }
  __syncthreads();
#pragma unroll
  for (int position = 0; position < 4; ++position)
    if (out.angle[position].data) storeStaged(staged[position], out.angle[position], x0, y0, subW, subH);
  if constexpr (Stokes) {
    if (!inside) return;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      int px = x + (q & 1), py = y + (q >> 1);
      pp::polar::Stokes luma{0.f, 0.f, 0.f};
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        if (out.s0.data) out.s0.at(px, py, c) = static_cast<T>((sum[q][c] + 2) >> 2);
        // The same float operations as stokes(): s0 = (sum) * 0.5, s1 and s2 exact differences.
        pp::polar::Stokes st{static_cast<float>(sum[q][c]) * 0.5f, static_cast<float>(s1[q][c]), static_cast<float>(s2[q][c])};
        if (out.s1.data) out.s1.at(px, py, c) = st.s1;
        if (out.s2.data) out.s2.at(px, py, c) = st.s2;
        float w = lumaWeight(c);
        luma.s0 += w * st.s0, luma.s1 += w * st.s1, luma.s2 += w * st.s2;
      }
      storePolarization(out, px, py, luma, static_cast<float>(maxv));
    }
  }
}

template <int C00, int C10, int C01, int C11, class T>
void launchColour(const Settings& s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out, const PositionWeights& w, cudaStream_t stream) {
  dim3 block(kThreadsX, kThreadsY), grid((subW + kTileW - 1) / kTileW, (subH + kTileH - 1) / kTileH);
  bool stokes = out.s0.data || out.s1.data || out.s2.data || out.dolp.data || out.aolp.data || out.aolpVisual.data;
  if (stokes) demosaicColour<C00, C10, C01, C11, true, T><<<grid, block, 0, stream>>>(s, raw, subW, subH, out, w);
  else demosaicColour<C00, C10, C01, C11, false, T><<<grid, block, 0, stream>>>(s, raw, subW, subH, out, w);
}

// Mono, half resolution: a thread per four super-pixels side by side, so that 8 and 16-bit raw
// rows (when aligned) are read a vector at a time and the angle planes (when aligned) written four
// pixels at a time (H100, mono8-angles x32: 0.0126 -> 0.0108 ms against a super-pixel a thread;
// eight a thread, 0.0123). A row's last group may be partial; other planes go pixel by pixel.
constexpr int kMonoGroup = 4;

template <class V, int N>
struct alignas(N * sizeof(V)) Vector {
  V v[N];
};

template <class T>
__global__ void demosaicMonoHalf(Settings s, ImageView<const uint8_t> raw, int outW, int outH, Planes<T> out, bool vectorRaw, bool vectorAngles) {
  int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * kMonoGroup, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x0 >= outW || y >= outH) return;
  bool whole = x0 + kMonoGroup <= outW;
  int sample[2][2 * kMonoGroup];  // [raw row][raw column from 2 * x0]
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (whole && vectorRaw && s.format == RawFormat::mono8) {
      auto v = *reinterpret_cast<const Vector<uint8_t, 2 * kMonoGroup>*>(raw.row(2 * y + r) + 2 * x0);
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i) sample[r][i] = v.v[i];
    } else if (whole && vectorRaw) {
      auto v = *reinterpret_cast<const Vector<uint16_t, 2 * kMonoGroup>*>(raw.row(2 * y + r) + 4 * x0);
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i) sample[r][i] = v.v[i];
    } else {
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i) sample[r][i] = x0 + i / 2 < outW ? rawSample(raw, s.format, 2 * x0 + i, 2 * y + r) : 0;
    }
  }
  bool packed = whole && vectorAngles;
  Planes<T> rest = out;  // what finishPixel writes
  if (packed)
    for (auto& plane : rest.angle) plane.data = nullptr;
  const uint8_t* at = s.layout.angleAt;
  Vector<T, kMonoGroup> angle[4];
#pragma unroll
  for (int i = 0; i < kMonoGroup; ++i) {
    if (x0 + i >= outW) break;
    int value[4][3];
    int p0 = sample[0][2 * i], p1 = sample[0][2 * i + 1], p2 = sample[1][2 * i], p3 = sample[1][2 * i + 1];  // block positions, row-major
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // selects, not an array indexed at run time (local memory)
      value[k][0] = at[0] == k ? p0 : at[1] == k ? p1 : at[2] == k ? p2 : p3;
      angle[k].v[i] = static_cast<T>(value[k][0]);
    }
    finishPixel(rest, x0 + i, y, value, 1, static_cast<float>(maxValue(s.format)));
  }
  if (packed)
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (out.angle[k].data) *reinterpret_cast<Vector<T, kMonoGroup>*>(&out.angle[k].at(x0, y, 0)) = angle[k];
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
    // The kernel works in block positions: angle planes and Stokes weights reordered to them.
    Planes<T> byPosition = out;
    PositionWeights w{};
    for (int position = 0; position < 4; ++position) {
      int k = s.layout.angleAt[position];
      byPosition.angle[position] = out.angle[k];
      w.s1[position] = k == 0 ? 1.f : k == 2 ? -1.f : 0.f;
      w.s2[position] = k == 1 ? 1.f : k == 3 ? -1.f : 0.f;
    }
    const uint8_t* c = s.layout.colourAt;
    if (c[0] == R) launchColour<R, G, G, B>(s, raw, subW, subH, byPosition, w, stream);
    else if (c[0] == B) launchColour<B, G, G, R>(s, raw, subW, subH, byPosition, w, stream);
    else if (c[1] == R) launchColour<G, R, B, G>(s, raw, subW, subH, byPosition, w, stream);
    else launchColour<G, B, R, G>(s, raw, subW, subH, byPosition, w, stream);
  } else {
    int outW = s.fullResolution ? rawWidth : rawWidth / 2, outH = s.fullResolution ? raw.height : raw.height / 2;
    dim3 block(32, 8), grid((outW + 31) / 32, (outH + 7) / 8);
    if (s.fullResolution) {
      demosaicMonoFull<T><<<grid, block, 0, stream>>>(s, raw, outW, outH, out);
    } else {
      bool vectorRaw = s.format != RawFormat::mono12p && raw.rowsAligned(2 * kMonoGroup * (s.format == RawFormat::mono8 ? 1 : 2));
      bool vectorAngles = true;
      for (const auto& plane : out.angle) vectorAngles = vectorAngles && plane.rowsAligned(kMonoGroup * sizeof(T));
      dim3 groups((outW + 32 * kMonoGroup - 1) / (32 * kMonoGroup), (outH + 7) / 8);
      demosaicMonoHalf<T><<<groups, block, 0, stream>>>(s, raw, outW, outH, out, vectorRaw, vectorAngles);
    }
  }
  PP_CUDA_CHECK_LAUNCH();
}

template void launchDemosaic<uint8_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint8_t>&, cudaStream_t);
template void launchDemosaic<uint16_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint16_t>&, cudaStream_t);

}  // namespace pp::polar
