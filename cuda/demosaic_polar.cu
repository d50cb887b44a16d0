#include "cuda/demosaic_polar.cuh"
#include <type_traits>

#include "pipeline/cuda_check.hpp"

namespace pp::polar {

namespace {

// What the four angle values of one mono pixel give, computed as the CPU reference computes them
// (stokes(), storePolarization()): S0 in the input's range, S1, S2, and DoLP, AoLP and the visual
// when `polarization` (any of the three planes) is wanted.
template <class T>
struct MonoStokes {
  T s0;
  float s1, s2, dolp = 0.f, aolp = 0.f;
  uint8_t visual[3] = {};
  __device__ __forceinline__ MonoStokes(const int (&v)[4], bool polarization, bool visualWanted, float maxv) {
    s0 = static_cast<T>((v[0] + v[1] + v[2] + v[3] + 2) >> 2);
    Stokes st = stokes(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]), static_cast<float>(v[3]));
    s1 = st.s1, s2 = st.s2;
    if (!polarization) return;
    dolp = pp::polar::dolp(st), aolp = pp::polar::aolp(st);
    if (visualWanted) aolpVisual(aolp, dolp, st.s0 * 0.5f / maxv, visual);
  }
};

// Colour blocks: 32x4 threads, each demosaicing a 2x2 quad of half-resolution pixels of all four
// angles, so the Bayer colour of each of its pixels is known at compile time. A block covers 64x8
// pixels. The two polarizer positions of a block row (raw columns 0 and 1) are carried together
// as the 16-bit lanes of one word: in the tile, and for 8-bit raw through all of MHC's arithmetic
// (its x16 sums stay within a lane), so one integer operation serves two angles.
constexpr int kThreadsX = 32, kThreadsY = 4, kThreads = kThreadsX * kThreadsY;
constexpr int kTileW = 2 * kThreadsX, kTileH = 2 * kThreadsY;
// Tile: kRawTileH raw rows (the block's sub-image rows with a 2-row halo, both polarizer rows) of
// position pairs for sub-image columns x0 - kTileLead .. x0 + kTileW + kTileLead - 1; the windows
// reach columns kTileLead - 2 .. kTileLead + kTileW + 1. The lead keeps 16-byte raw chunks aligned.
constexpr int kRawTileH = (kTileH + 4) * 2, kTileLead = 8, kTileWords = kTileW + 2 * kTileLead;
constexpr int kWindowBegin = kTileLead - 2, kWindowEnd = kTileLead + kTileW + 2;

// A tile coordinate reflected into the sub-image; in a sub-image smaller than the tile, those that
// one reflection leaves outside feed no output and are only kept from reading outside the frame.
__device__ __forceinline__ int tileSource(int i, int n) { return min(max(reflect101(i, n), 0), n - 1); }

// Two positions of 8-bit raw in the 16-bit lanes of a word. Sums are formed from non-negative
// terms (plus and minus separately), so no lane borrows from the other.
struct BytePair {
  uint32_t v;
  static __device__ __forceinline__ BytePair fromWord(uint32_t w) { return {w}; }
  __device__ __forceinline__ BytePair operator+(BytePair o) const { return {v + o.v}; }
  __device__ __forceinline__ BytePair operator*(uint32_t k) const { return {v * k}; }
  // (plus - minus + 8) >> 4 clamped to 0..255, in each lane's low byte. With 4096 added, a lane
  // holds 1044..11244 (|minus| <= 3060, plus <= 7140 for 8-bit samples); clamped to 4096..8191
  // and shifted, it is 256 + the sample, and what lane 1 shifts into lane 0 lies above its byte.
  static __device__ __forceinline__ BytePair mhc(BytePair plus, BytePair minus, int) {
    uint32_t x = plus.v + 0x10081008u - minus.v;
    return {__vminu2(__vmaxu2(x, 0x10001000u), 0x1fff1fffu) >> 4};
  }
  template <int Lane> __device__ __forceinline__ int value() const { return (v >> (16 * Lane)) & 0xff; }
};

// Two positions of wider raw: plain ints.
struct WidePair {
  int a, b;
  static __device__ __forceinline__ WidePair fromWord(uint32_t w) { return {static_cast<int>(w & 0xffffu), static_cast<int>(w >> 16)}; }
  __device__ __forceinline__ WidePair operator+(WidePair o) const { return {a + o.a, b + o.b}; }
  __device__ __forceinline__ WidePair operator*(int k) const { return {a * k, b * k}; }
  static __device__ __forceinline__ WidePair mhc(WidePair plus, WidePair minus, int maxv) {
    return {mhcResult(plus.a - minus.a, maxv), mhcResult(plus.b - minus.b, maxv)};
  }
  template <int Lane> __device__ __forceinline__ int value() const { return Lane == 0 ? a : b; }
};

template <class T> using PairOf = std::conditional_t<sizeof(T) == 1, BytePair, WidePair>;

// Puts one 16-byte raw chunk into a tile row: 8-bit samples spread into 16-bit lanes, 16-bit
// samples as they are.
__device__ __forceinline__ void storeChunk(uint8_t, uint32_t* dst, uint4 v) {
  auto spread = [](uint32_t w, uint32_t second) { return __byte_perm(w, 0, second ? 0x4342 : 0x4140); };
  reinterpret_cast<uint4*>(dst)[0] = make_uint4(spread(v.x, 0), spread(v.x, 1), spread(v.y, 0), spread(v.y, 1));
  reinterpret_cast<uint4*>(dst)[1] = make_uint4(spread(v.z, 0), spread(v.z, 1), spread(v.w, 0), spread(v.w, 1));
}
__device__ __forceinline__ void storeChunk(uint16_t, uint32_t* dst, uint4 v) { *reinterpret_cast<uint4*>(dst) = v; }

// Loads the block's tile. Sub-image coordinates are reflected at the borders, so every angle
// keeps its Bayer phase. Rows of 16-byte aligned frames (not Mono12p) are copied 16 bytes at a
// time from their (reflected) source rows; only the window columns that no whole chunk inside the
// row covers are read sample by sample. (Border blocks reading every sample so took 45% of the
// warps' time.)
template <class T>
__device__ __forceinline__ void loadTile(uint32_t (&tile)[kRawTileH][kTileWords], const Settings& s, const ImageView<const uint8_t>& raw, int x0, int y0,
                                         int subW, int subH) {
  int tid = threadIdx.y * kThreadsX + threadIdx.x;
  auto sourceRow = [&](int ty) { return 2 * tileSource(y0 - 2 + ty / 2, subH) + (ty & 1); };
  int first = x0 - kTileLead;  // the sub-image column of tile column 0
  int leftEnd = kWindowEnd, rightBegin = kWindowEnd, rightEnd = kWindowEnd;  // columns read sample by sample: [kWindowBegin, leftEnd), [rightBegin, rightEnd)
  if (s.format != RawFormat::mono12p && raw.rowsAligned(16)) {
    // A thread copies one chunk column of every kRowsApart-th row: the divisions once, the loads together.
    constexpr int kPerChunk = 8 / static_cast<int>(sizeof(T)), kChunks = kTileWords / kPerChunk, kRowsApart = kThreads / kChunks;
    static_assert(kRawTileH % kRowsApart == 0, "whole passes over the tile rows");
    int rowBytes = 2 * subW * static_cast<int>(sizeof(T));
    if (tid < kRowsApart * kChunks) {
      int chunk = tid % kChunks, byte = 2 * static_cast<int>(sizeof(T)) * (first + kPerChunk * chunk);
      if (byte >= 0 && byte + 16 <= rowBytes) {
        uint4 v[kRawTileH / kRowsApart];
#pragma unroll
        for (int i = 0; i < kRawTileH / kRowsApart; ++i) v[i] = *reinterpret_cast<const uint4*>(raw.row(sourceRow(tid / kChunks + i * kRowsApart)) + byte);
#pragma unroll
        for (int i = 0; i < kRawTileH / kRowsApart; ++i) storeChunk(T{}, &tile[tid / kChunks + i * kRowsApart][kPerChunk * chunk], v[i]);
      }
    }
    // Left of the row; right of its last whole chunk up to the column the last pixel's window
    // reaches (sub-image x = subW + 1): further columns feed no output.
    leftEnd = min(max(-first, kWindowBegin), kWindowEnd);
    rightBegin = min(max((rowBytes >> 4) * kPerChunk - first, leftEnd), kWindowEnd);
    rightEnd = min(max(subW + 2 - first, rightBegin), kWindowEnd);
  }
  int left = leftEnd - kWindowBegin, columns = left + rightEnd - rightBegin;
  for (int i = tid; i < columns * kRawTileH; i += kThreads) {
    int ty = i / columns, j = i - ty * columns, k = j < left ? kWindowBegin + j : rightBegin + j - left, rawRow = sourceRow(ty);
    int x = 2 * tileSource(first + k, subW);
    tile[ty][k] = static_cast<uint32_t>(rawSample(raw, s.format, x, rawRow)) | static_cast<uint32_t>(rawSample(raw, s.format, x + 1, rawRow)) << 16;
  }
}

// How the block positions (row-major in the 2x2 polarizer block) map to Stokes: S1 = I0 - I90 and
// S2 = I45 - I135 as weights per position, set on the host from the layout.
struct PositionWeights {
  float s1[4], s2[4];
};

// Malvar-He-Cutler at one pixel whose colour is Here (compile time) for a pair of positions;
// p(dx, dy) reads their sub-images. Row and Col are the colours of its horizontal and vertical
// neighbours. The kernels of polar_math.hpp, x16, over their taps, as positive minus negative terms.
template <int Here, int Row, int Col, class P, class Pair>
__device__ __forceinline__ void mhcPixel(const P& p, int maxv, Pair (&rgb)[3]) {
  Pair c = p(0, 0), h2 = p(-2, 0) + p(2, 0), v2 = p(0, -2) + p(0, 2);
  Pair diag = p(-1, -1) + p(1, -1) + p(-1, 1) + p(1, 1);
  rgb[Here] = c;
  if constexpr (Here == G) {
    Pair h1 = p(-1, 0) + p(1, 0), v1 = p(0, -1) + p(0, 1), base = c * 10;
    rgb[Row] = Pair::mhc(base + h1 * 8 + v2, (h2 + diag) * 2, maxv);
    rgb[Col] = Pair::mhc(base + v1 * 8 + h2, (v2 + diag) * 2, maxv);
  } else {
    Pair cross = p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1), axial = h2 + v2;
    rgb[G] = Pair::mhc(c * 8 + cross * 4, axial * 2, maxv);
    rgb[Here == R ? B : R] = Pair::mhc(c * 12 + diag * 4, axial * 3, maxv);
  }
}

// Stages one quad row (two RGB pixels) of position lane Lane: 8-bit as three byte pairs.
template <int Lane>
__device__ __forceinline__ void stageRow(uint8_t* dst, const BytePair (&left)[3], const BytePair (&right)[3]) {
  constexpr uint32_t kPick = Lane == 0 ? 0x0040 : 0x0062;  // the lane's low byte of each word
  auto* pairs = reinterpret_cast<uint16_t*>(dst);
  pairs[0] = static_cast<uint16_t>(__byte_perm(left[0].v, left[1].v, kPick));
  pairs[1] = static_cast<uint16_t>(__byte_perm(left[2].v, right[0].v, kPick));
  pairs[2] = static_cast<uint16_t>(__byte_perm(right[1].v, right[2].v, kPick));
}
template <int Lane>
__device__ __forceinline__ void stageRow(uint16_t* dst, const WidePair (&left)[3], const WidePair (&right)[3]) {
  for (int c = 0; c < 3; ++c) dst[c] = static_cast<uint16_t>(left[c].value<Lane>()), dst[3 + c] = static_cast<uint16_t>(right[c].value<Lane>());
}

// Writes staged RGB rows sample by sample, for the planes in `which` (bit p: plane p): blocks at
// the image's right or bottom edge, planes whose rows are not 16-byte aligned.
template <class T>
__device__ __forceinline__ void storeStagedSamples(const T (&staged)[4][kTileH][kTileW * 3], const ImageView<T> (&planes)[4], unsigned which, int x0, int y0,
                                                    int subW, int subH) {
  int tid = threadIdx.y * kThreadsX + threadIdx.x, rows = min(kTileH, subH - y0), samples = min(kTileW, subW - x0) * 3;
  for (int p = 0; p < 4; ++p) {
    if (!(which & (1u << p))) continue;
    for (int i = tid; i < rows * kTileW * 3; i += kThreads) {
      int row = i / (kTileW * 3), column = i - row * kTileW * 3;
      if (column < samples) planes[p].row(y0 + row)[x0 * 3 + column] = staged[p][row][column];
    }
  }
}

// Writes the block's staged RGB rows: 16-byte chunks to planes whose rows are 16-byte aligned
// when the block is inside the image (x0 * 3 samples is then a multiple of 192), the others
// sample by sample.
template <class T>
__device__ __forceinline__ void storeStaged(const T (&staged)[4][kTileH][kTileW * 3], const ImageView<T> (&planes)[4], int x0, int y0, int subW, int subH) {
  int tid = threadIdx.y * kThreadsX + threadIdx.x;
  bool whole = x0 + kTileW <= subW && y0 + kTileH <= subH;
  unsigned chunked = 0, sampled = 0;  // bit p: plane p written in chunks, sample by sample
#pragma unroll
  for (int p = 0; p < 4; ++p)
    if (planes[p].data) (whole && planes[p].rowsAligned(16) ? chunked : sampled) |= 1u << p;
  constexpr int kChunks = kTileW * 3 * static_cast<int>(sizeof(T)) / 16;  // per row
  for (int i = tid; i < kChunks * kTileH; i += kThreads) {
    int row = i / kChunks, chunk = i - row * kChunks;
#pragma unroll
    for (int p = 0; p < 4; ++p)
      if (chunked & (1u << p)) reinterpret_cast<uint4*>(planes[p].row(y0 + row) + x0 * 3)[chunk] = reinterpret_cast<const uint4*>(staged[p][row])[chunk];
  }
  if (sampled) storeStagedSamples(staged, planes, sampled, x0, y0, subW, subH);
}

// N samples as one aligned load or store.
template <class V, int N>
struct alignas(N * sizeof(V)) Vector {
  V v[N];
};

// Writes the first `count` of N consecutive samples of a row of `plane` from (x, y): Piece samples
// a store when all N are wanted and the rows allow it (callers keep x * channels a multiple of
// Piece), else sample by sample. (Stokes planes written a sample a store touched a sector for
// every 4 bytes of a warp's floats.)
template <int Piece, class V, int N>
__device__ __forceinline__ void storeRun(const ImageView<V>& plane, int x, int y, const V (&v)[N], int count = N) {
  static_assert(N % Piece == 0, "whole pieces");
  V* at = &plane.at(x, y, 0);
  if (count == N && plane.rowsAligned(Piece * sizeof(V))) {
#pragma unroll
    for (int i = 0; i < N; i += Piece) {
      Vector<V, Piece> piece;
#pragma unroll
      for (int j = 0; j < Piece; ++j) piece.v[j] = v[i + j];
      *reinterpret_cast<Vector<V, Piece>*>(at + i) = piece;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < count) at[i] = v[i];
  }
}

// Colour sensors. C00..C11: the Bayer colours of the quad (template, so nothing is selected at
// run time). `out.angle` is in block-position order (the launcher reorders it). Every position's
// RGB rows are staged, then written out after one barrier; Stokes sums are kept only when a Stokes
// plane is wanted.
template <int C00, int C10, int C01, int C11, bool Stokes, class T>
__global__ void __launch_bounds__(kThreads) demosaicColour(Settings s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out,
                                                            PositionWeights weights) {
  using Pair = PairOf<T>;
  __shared__ __align__(16) uint32_t tile[kRawTileH][kTileWords];
  __shared__ __align__(16) T staged[4][kTileH][kTileW * 3];  // each position's RGB rows, written out 16 bytes at a time
  int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  loadTile<T>(tile, s, raw, x0, y0, subW, subH);
  __syncthreads();
  int x = x0 + 2 * threadIdx.x, y = y0 + 2 * threadIdx.y;  // the quad's top-left pixel
  bool inside = x < subW && y < subH;                       // sub-image sizes are even
  int maxv = sizeof(T) == 1 ? 255 : maxValue(s.format);
  int sum[4][3] = {}, s1[4][3] = {}, s2[4][3] = {};  // [quad pixel][channel], scaled below
#pragma unroll
  for (int row = 0; row < 2; ++row) {  // polarizer row: positions 2 * row (lane 0) and 2 * row + 1 (lane 1)
    // The quad's windows, rows dy = -2..3 and columns dx = -2..3 from its top-left pixel, read in
    // column pairs; the corner pairs of the first and last rows feed no tap.
    const uint32_t* origin = &tile[(2 * threadIdx.y + 2) * 2 + row][2 * threadIdx.x + kTileLead];
    Pair window[6][6];
#pragma unroll
    for (int r = 0; r < 6; ++r)
#pragma unroll
      for (int c = 0; c < 6; c += 2) {
        if ((r == 0 || r == 5) && c != 2) continue;
        uint2 w = *reinterpret_cast<const uint2*>(origin + (r - 2) * 2 * kTileWords + c - 2);
        window[r][c] = Pair::fromWord(w.x), window[r][c + 1] = Pair::fromWord(w.y);
      }
    Pair rgb[4][3];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      int qx = q & 1, qy = q >> 1;
      auto p = [&](int dx, int dy) { return window[qy + dy + 2][qx + dx + 2]; };
      if (q == 0) mhcPixel<C00, C10, C01>(p, maxv, rgb[q]);
      if (q == 1) mhcPixel<C10, C00, C11>(p, maxv, rgb[q]);
      if (q == 2) mhcPixel<C01, C11, C00>(p, maxv, rgb[q]);
      if (q == 3) mhcPixel<C11, C01, C10>(p, maxv, rgb[q]);
    }
    if (inside)
#pragma unroll
      for (int qy = 0; qy < 2; ++qy) {
        int sy = 2 * threadIdx.y + qy, sx = 2 * threadIdx.x * 3;
        if (out.angle[2 * row].data) stageRow<0>(&staged[2 * row][sy][sx], rgb[2 * qy], rgb[2 * qy + 1]);
        if (out.angle[2 * row + 1].data) stageRow<1>(&staged[2 * row + 1][sy][sx], rgb[2 * qy], rgb[2 * qy + 1]);
      }
    if constexpr (Stokes) {
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int c = 0; c < 3; ++c) {
          int v0 = rgb[q][c].template value<0>(), v1 = rgb[q][c].template value<1>();
          sum[q][c] += v0 + v1;
          s1[q][c] += static_cast<int>(weights.s1[2 * row]) * v0 + static_cast<int>(weights.s1[2 * row + 1]) * v1;
          s2[q][c] += static_cast<int>(weights.s2[2 * row]) * v0 + static_cast<int>(weights.s2[2 * row + 1]) * v1;
        }
    }
  }
  __syncthreads();
  storeStaged(staged, out.angle, x0, y0, subW, subH);
  if constexpr (Stokes) {
    if (!inside) return;
    bool polarization = out.dolp.data || out.aolp.data || out.aolpVisual.data;
#pragma unroll
    for (int qy = 0; qy < 2; ++qy) {  // each quad row's two pixels, written together
      T s0Row[6];
      float s1Row[6], s2Row[6], dolpRow[2], aolpRow[2];
      uint8_t visualRow[6];
#pragma unroll
      for (int qx = 0; qx < 2; ++qx) {
        int q = 2 * qy + qx;
        pp::polar::Stokes luma{0.f, 0.f, 0.f};
#pragma unroll
        for (int c = 0; c < 3; ++c) {
          s0Row[3 * qx + c] = static_cast<T>((sum[q][c] + 2) >> 2);
          // The same float operations as stokes(): s0 = (sum) * 0.5, s1 and s2 exact differences.
          pp::polar::Stokes st{static_cast<float>(sum[q][c]) * 0.5f, static_cast<float>(s1[q][c]), static_cast<float>(s2[q][c])};
          s1Row[3 * qx + c] = st.s1, s2Row[3 * qx + c] = st.s2;
          float w = lumaWeight(c);
          luma.s0 += w * st.s0, luma.s1 += w * st.s1, luma.s2 += w * st.s2;
        }
        if (polarization) {  // as storePolarization() computes them
          dolpRow[qx] = dolp(luma), aolpRow[qx] = aolp(luma);
          if (out.aolpVisual.data) aolpVisual(aolpRow[qx], dolpRow[qx], luma.s0 * 0.5f / static_cast<float>(maxv), &visualRow[3 * qx]);
        }
      }
      if (out.s0.data) storeRun<2>(out.s0, x, y + qy, s0Row);
      if (out.s1.data) storeRun<2>(out.s1, x, y + qy, s1Row);
      if (out.s2.data) storeRun<2>(out.s2, x, y + qy, s2Row);
      if (out.dolp.data) storeRun<2>(out.dolp, x, y + qy, dolpRow);
      if (out.aolp.data) storeRun<2>(out.aolp, x, y + qy, aolpRow);
      if (out.aolpVisual.data) storeRun<2>(out.aolpVisual, x, y + qy, visualRow);
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
// rows (when aligned) are read a vector at a time and every plane (when aligned) written four
// pixels at a time (H100, mono8-angles x32: 0.0126 -> 0.0108 ms against a super-pixel a thread;
// eight a thread, 0.0123). A row's last group may be partial.
constexpr int kMonoGroup = 4;

template <class T>
__global__ void demosaicMonoHalf(Settings s, ImageView<const uint8_t> raw, int outW, int outH, Planes<T> out, bool vectorRaw) {
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
  int count = min(kMonoGroup, outW - x0);
  const uint8_t* at = s.layout.angleAt;
  bool polarization = out.dolp.data || out.aolp.data || out.aolpVisual.data;
  float maxv = static_cast<float>(maxValue(s.format));
  T angle[4][kMonoGroup], s0[kMonoGroup];
  float s1[kMonoGroup], s2[kMonoGroup], dolpRun[kMonoGroup], aolpRun[kMonoGroup];
  uint8_t visual[3 * kMonoGroup];
#pragma unroll
  for (int i = 0; i < kMonoGroup; ++i) {
    int p0 = sample[0][2 * i], p1 = sample[0][2 * i + 1], p2 = sample[1][2 * i], p3 = sample[1][2 * i + 1];  // block positions, row-major
    int value[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // selects, not an array indexed at run time (local memory)
      value[k] = at[0] == k ? p0 : at[1] == k ? p1 : at[2] == k ? p2 : p3;
      angle[k][i] = static_cast<T>(value[k]);
    }
    MonoStokes<T> d(value, polarization, out.aolpVisual.data, maxv);
    s0[i] = d.s0, s1[i] = d.s1, s2[i] = d.s2, dolpRun[i] = d.dolp, aolpRun[i] = d.aolp;
#pragma unroll
    for (int c = 0; c < 3; ++c) visual[3 * i + c] = d.visual[c];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (out.angle[k].data) storeRun<kMonoGroup>(out.angle[k], x0, y, angle[k], count);
  if (out.s0.data) storeRun<kMonoGroup>(out.s0, x0, y, s0, count);
  if (out.s1.data) storeRun<kMonoGroup>(out.s1, x0, y, s1, count);
  if (out.s2.data) storeRun<kMonoGroup>(out.s2, x0, y, s2, count);
  if (out.dolp.data) storeRun<kMonoGroup>(out.dolp, x0, y, dolpRun, count);
  if (out.aolp.data) storeRun<kMonoGroup>(out.aolp, x0, y, aolpRun, count);
  if (out.aolpVisual.data) storeRun<kMonoGroup>(out.aolpVisual, x0, y, visual, 3 * count);
}

// Mono, full resolution: each angle at every pixel from its nearest samples, as the CPU does.
template <class T>
__global__ void demosaicMonoFull(Settings s, ImageView<const uint8_t> raw, int outW, int outH, Planes<T> out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= outW || y >= outH) return;
  int subW = outW / 2, subH = outH / 2;
  int value[4];
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
    value[k] = (sum + n / 2) / n;
    if (out.angle[k].data) out.angle[k].at(x, y) = static_cast<T>(value[k]);
  }
  MonoStokes<T> d(value, out.dolp.data || out.aolp.data || out.aolpVisual.data, out.aolpVisual.data, static_cast<float>(maxValue(s.format)));
  if (out.s0.data) out.s0.at(x, y) = d.s0;
  if (out.s1.data) out.s1.at(x, y) = d.s1;
  if (out.s2.data) out.s2.at(x, y) = d.s2;
  if (out.dolp.data) out.dolp.at(x, y) = d.dolp;
  if (out.aolp.data) out.aolp.at(x, y) = d.aolp;
  if (out.aolpVisual.data)
    for (int c = 0; c < 3; ++c) out.aolpVisual.at(x, y, c) = d.visual[c];
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
      dim3 groups((outW + 32 * kMonoGroup - 1) / (32 * kMonoGroup), (outH + 7) / 8);
      demosaicMonoHalf<T><<<groups, block, 0, stream>>>(s, raw, outW, outH, out, vectorRaw);
    }
  }
  PP_CUDA_CHECK_LAUNCH();
}

template void launchDemosaic<uint8_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint8_t>&, cudaStream_t);
template void launchDemosaic<uint16_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint16_t>&, cudaStream_t);

}  // namespace pp::polar
