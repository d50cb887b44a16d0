#include <type_traits>
#include "cuda/demosaic_polar.cuh"

#include "cuda/cuda_check.hpp"

namespace pp::polar {

namespace {

// What the four angle values of one mono pixel give, computed as the CPU reference computes them
// (stokes(), polarizersPass(), storePolarization()): S0 in the input's range, S1, S2, and DoLP, AoLP and
// the visual, each when its plane is wanted; with Products, the polarizers' images and the normal
// too (a kernel of their own: the planes without them keep their registers and speed).
template <class T, bool Products> struct MonoStokes {
  T s0, minimum = 0, maximum = 0, polarizer = 0;
  float s1, s2, dolp = 0.f, aolp = 0.f, normal[3] = {};
  uint8_t visual[3] = {}, normalColour[3] = {};
  // `polarization`: any plane made from the Stokes vector as a whole is wanted (the kernel works
  // it out once, as it does `maxv`).
  template <class U> __device__ __forceinline__ MonoStokes(const int (&v)[4], const Settings& s, const Planes<U>& out,
                                                           bool polarization, int maxv) {
    s0 = static_cast<T>((v[0] + v[1] + v[2] + v[3] + 2) >> 2);
    Stokes st =
        stokes(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]), static_cast<float>(v[3]));
    s1 = st.s1, s2 = st.s2;
    if constexpr (Products) {
      if (out.wantsFiltered()) {
        Passed passed = polarizersPass(stokesSums(v[0], v[1], v[2], v[3]), s, maxv);
        minimum = static_cast<T>(passed.least), maximum = static_cast<T>(passed.most),
        polarizer = static_cast<T>(passed.at);
      }
    }
    if (!polarization) return;
    dolp = pp::polar::dolp(st), aolp = pp::polar::aolp(st);
    if (out.aolpVisual.data) aolpVisual(aolp, dolp, st.s0 * 0.5f / static_cast<float>(maxv), visual);
    if constexpr (Products) {
      if (out.wantsNormals())
        normalVisual(normal, surfaceNormal(st, s.refractiveIndex, s.minDolp, normal), normalColour);
    }
  }
};

// Colour blocks: 32x4 threads, each demosaicing 4x2 half-resolution pixels (two 2x2 quads side by
// side) of all four angles, so the Bayer colour of each of its pixels is known at compile time. A
// block covers 128x8 pixels. The two polarizer positions of a block row (raw columns 0 and 1) are
// carried together as the 16-bit lanes of one word: in the tile, and for 8-bit raw through all of
// MHC's arithmetic (its x16 sums stay within a lane), so one integer operation serves two angles.
// Four pixels a thread make a 12-byte piece of each RGB row, staged by three 4-byte stores that
// hit 32 different banks across a warp (a quad a thread staged 6-byte pieces: 2-byte stores of two
// wavefronts each), and it reads its windows 16 bytes at a time.
constexpr int kThreadsX = 32, kThreadsY = 4, kThreads = kThreadsX * kThreadsY;
constexpr int kSpanX = 4;  // a thread's pixels along a row
constexpr int kTileW = kSpanX * kThreadsX, kTileH = 2 * kThreadsY;
// Tile: kRawTileH raw rows (the block's sub-image rows with a 2-row halo, both polarizer rows) of
// position pairs for sub-image columns x0 - kTileLead .. x0 + kTileW + kTileLead - 1; the windows
// reach columns kTileLead - 2 .. kTileLead + kTileW + 1. The lead keeps 16-byte raw chunks aligned.
constexpr int kRawTileH = (kTileH + 4) * 2, kTileLead = 8, kTileWords = kTileW + 2 * kTileLead;
// Held as [polarizer row][sub-image row][column], so each polarizer row's rows are one block of
// shared memory that is free once every warp has read its windows there.
using Tile = uint32_t[2][kRawTileH / 2][kTileWords];
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
  static __device__ __forceinline__ WidePair fromWord(uint32_t w) {
    return {static_cast<int>(w & 0xffffu), static_cast<int>(w >> 16)};
  }
  __device__ __forceinline__ WidePair operator+(WidePair o) const { return {a + o.a, b + o.b}; }
  __device__ __forceinline__ WidePair operator*(int k) const { return {a * k, b * k}; }
  static __device__ __forceinline__ WidePair mhc(WidePair plus, WidePair minus, int maxv) {
    return {mhcResult(plus.a - minus.a, maxv), mhcResult(plus.b - minus.b, maxv)};
  }
  template <int Lane> __device__ __forceinline__ int value() const { return Lane == 0 ? a : b; }
};

template <class T> using PairOf = std::conditional_t<sizeof(T) == 1, BytePair, WidePair>;

// Raw tile row ty (polarizer row ty % 2 of sub-image row ty / 2), column k.
__device__ __forceinline__ uint32_t* tileAt(Tile& tile, int ty, int k) { return &tile[ty & 1][ty >> 1][k]; }

// Puts one 16-byte raw chunk into a tile row: 8-bit samples spread into 16-bit lanes, 16-bit
// samples as they are.
__device__ __forceinline__ void storeChunk(uint8_t, uint32_t* dst, uint4 v) {
  auto spread = [](uint32_t w, uint32_t second) { return __byte_perm(w, 0, second ? 0x4342 : 0x4140); };
  reinterpret_cast<uint4*>(dst)[0] = make_uint4(spread(v.x, 0), spread(v.x, 1), spread(v.y, 0), spread(v.y, 1));
  reinterpret_cast<uint4*>(dst)[1] = make_uint4(spread(v.z, 0), spread(v.z, 1), spread(v.w, 0), spread(v.w, 1));
}
__device__ __forceinline__ void storeChunk(uint16_t, uint32_t* dst, uint4 v) { *reinterpret_cast<uint4*>(dst) = v; }
// Four tile words of 16-bit samples cut to their top 8 bits (sampleShift) for 8-bit arithmetic.
__device__ __forceinline__ void storeChunkTopBits(uint32_t* dst, uint4 v, int shift) {
  auto top = [shift](uint32_t w) { return (w >> shift) & 0x00FF00FFu; };
  *reinterpret_cast<uint4*>(dst) = make_uint4(top(v.x), top(v.y), top(v.z), top(v.w));
}

// Bytes of a packed format's chunk of four pixel pairs (8 samples): 12, or 10 for Mono10p.
__host__ __device__ __forceinline__ int packedChunkBytes(RawFormat f) {
  return 8 / packedGroupPixels(f) * packedGroupBytes(f);
}

// A packed chunk (four pixel pairs) as four tile words, each pair's samples in the two 16-bit lanes.
// Chunks start a multiple of 4 pairs into 4-byte aligned rows (tile columns start at multiples of
// 8 pairs): 12-byte chunks are 4-byte aligned, three 4-byte loads; Mono10p's 10 bytes are 2-byte
// aligned, five 2-byte loads.
template <RawFormat F> __device__ __forceinline__ uint4 unpackChunk(const uint8_t* p) {
  if constexpr (F == RawFormat::mono10p) {  // an 80-bit stream, 10 bits a sample, lowest first
    const auto* h = reinterpret_cast<const uint16_t*>(p);
    uint64_t lo = h[0] | uint64_t{h[1]} << 16 | uint64_t{h[2]} << 32 | uint64_t{h[3]} << 48;
    uint32_t hi = h[4];
    auto at = [&](int i) { return static_cast<uint32_t>(lo >> (10 * i)) & 0x3FFu; };
    uint32_t s6 = (static_cast<uint32_t>(lo >> 60) | hi << 4) & 0x3FFu, s7 = hi >> 6;
    return make_uint4(at(0) | at(1) << 16, at(2) | at(3) << 16, at(4) | at(5) << 16, s6 | s7 << 16);
  }
  const auto* w = reinterpret_cast<const uint32_t*>(p);
  uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
  if constexpr (F == RawFormat::mono12p) {  // 24 bits a pair, lowest first
    auto pair = [](uint32_t bits) { return (bits & 0xFFFu) | ((bits >> 12) & 0xFFFu) << 16; };
    return make_uint4(pair(w0), pair(w0 >> 24 | w1 << 8), pair(w1 >> 16 | w2 << 16), pair(w2 >> 8));
  }
  // GigE Vision's Packed: per pair, the first pixel's high bits, both pixels' low bits, the second's high bits.
  constexpr int kLow = F == RawFormat::mono10packed ? 2 : 4, kMask = (1 << kLow) - 1;
  auto byte = [&](int k) { return ((k < 4 ? w0 : k < 8 ? w1 : w2) >> (8 * (k & 3))) & 0xFFu; };
  auto pair = [&](int i) {
    uint32_t middle = byte(3 * i + 1);
    return (byte(3 * i) << kLow | (middle & kMask)) | (byte(3 * i + 2) << kLow | ((middle >> 4) & kMask)) << 16;
  };
  return make_uint4(pair(0), pair(1), pair(2), pair(3));
}

__device__ __forceinline__ uint4 unpackChunk(RawFormat f, const uint8_t* p) {
  switch (f) {
    case RawFormat::mono10p: return unpackChunk<RawFormat::mono10p>(p);
    case RawFormat::mono12p: return unpackChunk<RawFormat::mono12p>(p);
    case RawFormat::mono10packed: return unpackChunk<RawFormat::mono10packed>(p);
    default: return unpackChunk<RawFormat::mono12packed>(p);
  }
}

// One thread's chunk column of the tile: a chunk (16 raw bytes, or a packed chunk of format F,
// unpacked) from every kRowsApart-th tile row from firstRow, at `byte` into each source row. T is
// the arithmetic's sample type: 8-bit from wider raw takes each sample's top bits (`shift`).
template <class T, RawFormat F, int kPerChunk, int kRowsApart, class SourceRow>
__device__ __forceinline__ void copyChunks(Tile& tile, const ImageView<const uint8_t>& raw, const SourceRow& sourceRow,
                                           int firstRow, int chunk, int byte, int shift) {
  constexpr int kPasses = (kRawTileH + kRowsApart - 1) / kRowsApart;
  uint4 v[kPasses];
#pragma unroll
  for (int i = 0; i < kPasses; ++i)
    if (firstRow + i * kRowsApart < kRawTileH) {
      const uint8_t* at = raw.row(sourceRow(firstRow + i * kRowsApart)) + byte;
      if constexpr (isPacked(F))
        v[i] = unpackChunk<F>(at);
      else
        v[i] = *reinterpret_cast<const uint4*>(at);
    }
#pragma unroll
  for (int i = 0; i < kPasses; ++i)
    if (firstRow + i * kRowsApart < kRawTileH)
      if constexpr (sizeof(T) == 1 && F != RawFormat::mono8)
        storeChunkTopBits(tileAt(tile, firstRow + i * kRowsApart, kPerChunk * chunk), v[i], shift);
      else
        storeChunk(T{}, tileAt(tile, firstRow + i * kRowsApart, kPerChunk * chunk), v[i]);
}

// Loads the block's tile. Sub-image coordinates are reflected at the borders, so every angle
// keeps its Bayer phase. Rows of 16-byte aligned frames are copied 16 bytes at a time (Mono12p: 12
// packed bytes, unpacked) from their (reflected) source rows; only the window columns that no whole
// chunk inside the row covers are read sample by sample (border blocks reading every sample that
// way dominated the time). kWideRaw: the raw samples take 16 bits (or are packed), so a chunk
// holds 8 of them, not 16.
template <class T, bool kWideRaw> __device__ __forceinline__ void loadTile(Tile& tile, const Settings& s,
                                                                           const ImageView<const uint8_t>& raw, int x0,
                                                                           int y0, int subW, int subH) {
  int tid = threadIdx.y * kThreadsX + threadIdx.x;
  auto sourceRow = [&](int ty) { return 2 * tileSource(y0 - 2 + ty / 2, subH) + (ty & 1); };
  int first = x0 - kTileLead;  // the sub-image column of tile column 0
  int leftEnd = kWindowEnd, rightBegin = kWindowEnd,
      rightEnd = kWindowEnd;  // columns read sample by sample: [kWindowBegin, leftEnd), [rightBegin, rightEnd)
  // Packed formats (16-bit samples in the tile): chunks of 10 or 12 packed bytes, unpacked into the same 4 words.
  const bool packed = kWideRaw && isPacked(s.format);  // known false for 8-bit raw
  if (packed ? raw.rowsAligned(4) : raw.rowsAligned(16)) {
    // A thread copies one chunk column of every kRowsApart-th row: the divisions once, the loads together.
    constexpr int kPerChunk = kWideRaw ? 4 : 8, kChunks = kTileWords / kPerChunk, kRowsApart = kThreads / kChunks;
    int chunkBytes = packed ? packedChunkBytes(s.format) : 16,
        rowBytes = subW * chunkBytes / kPerChunk;  // subW is even for every packing
    if (tid < kRowsApart * kChunks) {
      int chunk = tid % kChunks, firstRow = tid / kChunks, byte = (first + kPerChunk * chunk) * chunkBytes / kPerChunk;
      if (byte >= 0 && byte + chunkBytes <= rowBytes) {
        // One copy loop per packing, chosen once, so each keeps its own registers.
        const int shift = s.sampleShift;
        if constexpr (kWideRaw) {
          switch (s.format) {
            case RawFormat::mono10p:
              copyChunks<T, RawFormat::mono10p, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte,
                                                                       shift);
              break;
            case RawFormat::mono12p:
              copyChunks<T, RawFormat::mono12p, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte,
                                                                       shift);
              break;
            case RawFormat::mono10packed:
              copyChunks<T, RawFormat::mono10packed, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte,
                                                                            shift);
              break;
            case RawFormat::mono12packed:
              copyChunks<T, RawFormat::mono12packed, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte,
                                                                            shift);
              break;
            default:
              copyChunks<T, RawFormat::mono16, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte,
                                                                      shift);
          }
        } else {
          copyChunks<T, RawFormat::mono8, kPerChunk, kRowsApart>(tile, raw, sourceRow, firstRow, chunk, byte, shift);
        }
      }
    }
    // Left of the row; right of its last whole chunk up to the column the last pixel's window
    // reaches (sub-image x = subW + 1): further columns feed no output.
    leftEnd = min(max(-first, kWindowBegin), kWindowEnd);
    rightBegin = min(max(rowBytes / chunkBytes * kPerChunk - first, leftEnd), kWindowEnd);
    rightEnd = min(max(subW + 2 - first, rightBegin), kWindowEnd);
  }
  int left = leftEnd - kWindowBegin, columns = left + rightEnd - rightBegin;
  for (int i = tid; i < columns * kRawTileH; i += kThreads) {
    int ty = i / columns, j = i - ty * columns, k = j < left ? kWindowBegin + j : rightBegin + j - left,
        rawRow = sourceRow(ty);
    int x = 2 * tileSource(first + k, subW);
    *tileAt(tile, ty, k) = static_cast<uint32_t>(sampleOf(raw, s, x, rawRow)) |
                           static_cast<uint32_t>(sampleOf(raw, s, x + 1, rawRow)) << 16;
  }
}

// A thread's windows for one polarizer row: tile rows dy = -2..3 and columns dx = -2..5 from its
// first pixel (`origin`), as the 16-byte group of its own four columns and the one or two columns
// on either side that the taps reach; the corners no tap reads are left out.
template <class Pair>
__device__ __forceinline__ void loadWindow(const uint32_t* origin, Pair (&window)[6][kSpanX + 4]) {
#pragma unroll
  for (int r = 0; r < 6; ++r) {
    const uint32_t* at = origin + (r - 2) * kTileWords;
    uint4 own = *reinterpret_cast<const uint4*>(at);
    window[r][2] = Pair::fromWord(own.x), window[r][3] = Pair::fromWord(own.y), window[r][4] = Pair::fromWord(own.z),
    window[r][5] = Pair::fromWord(own.w);
    if (r == 1 || r == 4) {
      window[r][1] = Pair::fromWord(at[-1]), window[r][6] = Pair::fromWord(at[kSpanX]);
    } else if (r == 2 || r == 3) {
      uint2 left = *reinterpret_cast<const uint2*>(at - 2), right = *reinterpret_cast<const uint2*>(at + kSpanX);
      window[r][0] = Pair::fromWord(left.x), window[r][1] = Pair::fromWord(left.y);
      window[r][6] = Pair::fromWord(right.x), window[r][7] = Pair::fromWord(right.y);
    }
  }
}

// The block position (row-major in the 2x2 polarizer block, the staged plane) of each angle, 0,
// 45, 90 and 135, set on the host from the layout.
struct AnglePositions {
  int of[4];
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

// Stages the thread's piece of one RGB row (its kSpanX pixels) for the two positions of a
// polarizer row at `first` and `second`. 8-bit: the byte pairs of four samples are gathered into
// one word per position, three 4-byte stores a position.
__device__ __forceinline__ void stagePiece(uint8_t* first, uint8_t* second, const BytePair (&rgb)[kSpanX][3]) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {  // samples 4k .. 4k + 3 of the piece
    auto sample = [&](int i) { return rgb[(4 * k + i) / 3][(4 * k + i) % 3].v; };
    uint32_t low = __byte_perm(sample(0), sample(1), 0x6240),
             high = __byte_perm(sample(2), sample(3), 0x6240);  // lane 0, lane 1, lane 0, lane 1 bytes
    reinterpret_cast<uint32_t*>(first)[k] = __byte_perm(low, high, 0x5410);
    reinterpret_cast<uint32_t*>(second)[k] = __byte_perm(low, high, 0x7632);
  }
}
__device__ __forceinline__ void stagePiece(uint16_t* first, uint16_t* second, const WidePair (&rgb)[kSpanX][3]) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {  // 8-byte stores
    auto sample = [&](int i) { return rgb[(4 * k + i) / 3][(4 * k + i) % 3]; };
    *reinterpret_cast<uint2*>(first + 4 * k) =
        make_uint2(sample(0).a | sample(1).a << 16, sample(2).a | sample(3).a << 16);
    *reinterpret_cast<uint2*>(second + 4 * k) =
        make_uint2(sample(0).b | sample(1).b << 16, sample(2).b | sample(3).b << 16);
  }
}

// Where the four angle planes' staged RGB rows (kTileH rows of kTileW * 3 samples each) are: the
// two planes of polarizer row r one after the other, from base + r * regionStride. 8-bit rows fit
// in the tile rows of their polarizer row once its windows are read (so a block needs 13.5 KB of
// shared memory and ten fit an SM, enough for the whole grid at once); 16-bit rows do not, and
// have their own.
template <class T> struct Staging {
  static constexpr bool kInTile = sizeof(T) == 1;
  static constexpr int kPlane = kTileH * kTileW * 3;  // samples
  T* base;
  int regionStride;  // samples
  __device__ __forceinline__ T* row(int plane, int y) const {
    return base + (plane >> 1) * regionStride + (plane & 1) * kPlane + y * kTileW * 3;
  }
};

// Writes the block's staged RGB rows: 16-byte chunks to planes whose rows are 16-byte aligned
// (x0 * 3 samples is a multiple of 384), sample by sample where a plane's rows are not or a chunk
// runs past the image's right edge.
template <class T> __device__ __forceinline__ void storeStaged(const Staging<T>& staged,
                                                               const ImageView<T> (&planes)[4], int x0, int y0,
                                                               int subW, int subH) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T)), kChunks = kTileW * 3 / kPerChunk;  // per row
  int tid = threadIdx.y * kThreadsX + threadIdx.x, rows = min(kTileH, subH - y0), samples = min(kTileW, subW - x0) * 3;
  bool aligned[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) aligned[p] = planes[p].rowsAligned(16);
  for (int i = tid; i < kChunks * rows; i += kThreads) {  // the same chunk of every plane
    int row = i / kChunks, begin = (i - row * kChunks) * kPerChunk;
    bool whole = begin + kPerChunk <= samples;
    uint4 chunk[4];  // loaded together (every position is staged), so the stores wait once
#pragma unroll
    for (int p = 0; p < 4; ++p) chunk[p] = *reinterpret_cast<const uint4*>(staged.row(p, row) + begin);
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      if (!planes[p].data) continue;
      T* dst = planes[p].row(y0 + row) + x0 * 3 + begin;
      if (aligned[p] && whole) {
        *reinterpret_cast<uint4*>(dst) = chunk[p];
      } else {
        const T* src = staged.row(p, row) + begin;
        for (int k = 0; k < kPerChunk && begin + k < samples; ++k) dst[k] = src[k];
      }
    }
  }
}

// N samples as one aligned load or store.
template <class V, int N> struct alignas(N * sizeof(V)) Vector { V v[N]; };

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

// Moves an array of N values along by K (the first K out) and puts `last` at its end: a loop that
// is not unrolled fills a row so, with no array indexed by its counter.
template <int K, class V, int N> __device__ __forceinline__ void shiftIn(V (&row)[N], const V (&last)[K]) {
#pragma unroll
  for (int i = 0; i + K < N; ++i) row[i] = row[i + K];
#pragma unroll
  for (int c = 0; c < K; ++c) row[N - K + c] = last[c];
}

// S0 and the polarizers' images of a thread's kSpanX pixels of one row, from one read of each
// sample's sums (sumsAt(i), i known at compile time); kMost and kAt say whether `max` and
// `polarizer` are wanted, so that none is computed unstored (`min` always: it costs two
// instructions a sample, and this runs only where one of the three is wanted). It also makes each
// pixel's luminance Stokes, as lumaAt() in storeStokesRow does, from the conversions the
// polarizers' images make anyway, and hands them to lumaTo(qx, luma) for the DoLP loop.
template <bool kMost, bool kAt, class T, class SumsAt, class LumaTo>
__device__ __forceinline__ void storeFilteredRow(const Planes<T>& out, const Settings& settings, const SumsAt& sumsAt,
                                                 const LumaTo& lumaTo, int x, int y, int count, int maxv) {
  constexpr int kSamples = 3 * kSpanX;
  T mean[kSamples], low[kSamples], high[kSamples], through[kSamples];
  pp::polar::Stokes luma{0.f, 0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kSamples; ++i) {
    StokesSums sums = sumsAt(i);
    Passed passed = polarizersPass(sums, settings, maxv);  // what is not stored is never computed
    mean[i] = static_cast<T>((sums.sum + 2) >> 2);
    low[i] = static_cast<T>(passed.least);
    if constexpr (kMost) high[i] = static_cast<T>(passed.most);
    if constexpr (kAt) through[i] = static_cast<T>(passed.at);
    addToLuma(luma, channelStokes(sums), lumaWeight(i % 3));
    if (i % 3 == 2) lumaTo(i / 3, luma), luma = {0.f, 0.f, 0.f};
  }
  if (out.s0.data) storeRun<4>(out.s0, x, y, mean, 3 * count);
  if (out.minimum.data) storeRun<4>(out.minimum, x, y, low, 3 * count);
  if constexpr (kMost) storeRun<4>(out.maximum, x, y, high, 3 * count);
  if constexpr (kAt) storeRun<4>(out.polarizer, x, y, through, 3 * count);
}

// DoLP, AoLP, the visual and, with kNormals, the normals (those wanted) of a thread's kSpanX pixels
// of one row, a pixel at a time from lumaAt(qx) (four pixels' worth at once took 96 registers);
// without kNormals the loop carries none of their values.
template <bool kNormals, class T, class LumaAt>
__device__ __forceinline__ void storePolarizationRow(const Planes<T>& out, const Settings& settings,
                                                     const LumaAt& lumaAt, int x, int y, int count, int maxv) {
  float dolpRow[kSpanX] = {}, aolpRow[kSpanX] = {}, normalRow[3 * kSpanX] = {};
  uint8_t visualRow[3 * kSpanX] = {}, colourRow[3 * kSpanX] = {};
#pragma unroll 1
  for (int qx = 0; qx < kSpanX; ++qx) {
    pp::polar::Stokes luma = lumaAt(qx);
    float d = dolp(luma), a = aolp(luma);
    uint8_t visual[3] = {};
    if (out.aolpVisual.data) aolpVisual(a, d, luma.s0 * 0.5f / static_cast<float>(maxv), visual);
    shiftIn<1>(dolpRow, {d}), shiftIn<1>(aolpRow, {a}), shiftIn<3>(visualRow, visual);
    if constexpr (kNormals) {
      float normal[3] = {};
      uint8_t colour[3] = {};
      normalVisual(normal, surfaceNormal(luma, settings.refractiveIndex, settings.minDolp, normal), colour);
      shiftIn<3>(normalRow, normal), shiftIn<3>(colourRow, colour);
    }
  }
  if (out.dolp.data) storeRun<4>(out.dolp, x, y, dolpRow, count);
  if (out.aolp.data) storeRun<4>(out.aolp, x, y, aolpRow, count);
  if (out.aolpVisual.data) storeRun<4>(out.aolpVisual, x, y, visualRow, 3 * count);
  if constexpr (kNormals) {
    if (out.normals.data) storeRun<4>(out.normals, x, y, normalRow, 3 * count);
    if (out.normalsVisual.data) storeRun<4>(out.normalsVisual, x, y, colourRow, 3 * count);
  }
}

// Writes the Stokes planes (those wanted) of one row of a thread's kSpanX pixels from the four
// positions' staged RGB values (so the MHC's registers are free by then), computed as stokes() and
// storePolarization() compute them, each plane kSpanX pixels a store when it can.
template <bool Products, class T>
__device__ __forceinline__ void storeStokesRow(const Planes<T>& out, const Settings& settings,
                                               const AnglePositions& positions, const Staging<T>& staged, int sy,
                                               int sx, int x, int y, int count, int maxv) {
  constexpr int kSamples = 3 * kSpanX, kPerWord = 4 / sizeof(T), kWords = kSamples / kPerWord;
  T* rows[4];  // each angle's staged piece (4-byte aligned)
#pragma unroll
  for (int k = 0; k < 4; ++k) rows[k] = staged.row(positions.of[k], sy) + sx;
  // The pieces' words, read before the filtered loop may write the luminance over them.
  uint32_t words[4][kWords];
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int j = 0; j < kWords; ++j) words[k][j] = reinterpret_cast<const uint32_t*>(rows[k])[j];
  auto sumsAt = [&](int i) {  // sample i (known at compile time) of the piece, picked out of its word
    int v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[k] = static_cast<int>(__byte_perm(words[k][i / kPerWord], 0u,
                                          kPerWord == 4 ? 0x4440u + i % 4
                                          : i % 2       ? 0x4432u
                                                        : 0x4410u));
    return stokesSums(v[0], v[1], v[2], v[3]);
  };
  // Where the filtered loop makes the luminance Stokes, pixel qx's go to the first 12 bytes of
  // piece qx (the thread's own, read by then); the pieces picked by selects, as qx is not known
  // at compile time in the DoLP loop.
  auto lumaSlot = [&](int qx) {
    return reinterpret_cast<float*>(qx == 0 ? rows[0] : qx == 1 ? rows[1] : qx == 2 ? rows[2] : rows[3]);
  };
  auto lumaTo = [&](int qx, pp::polar::Stokes luma) {
    float* at = lumaSlot(qx);
    at[0] = luma.s0, at[1] = luma.s1, at[2] = luma.s2;
  };
  auto lumaFrom = [&](int qx) {
    const float* at = lumaSlot(qx);
    return pp::polar::Stokes{at[0], at[1], at[2]};
  };
  auto lumaAt = [&](int qx) {  // pixel qx's luminance Stokes, as stokes() makes it; its samples read alone
    pp::polar::Stokes luma{0.f, 0.f, 0.f};
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      int v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = rows[k][3 * qx + c];
      addToLuma(luma, channelStokes(stokesSums(v[0], v[1], v[2], v[3])), lumaWeight(c));
    }
    return luma;
  };
  // S1 and S2 first: the words then need not live across the filtered loop.
  if (out.s1.data) {
    float row[kSamples];
#pragma unroll
    for (int i = 0; i < kSamples; ++i) row[i] = static_cast<float>(sumsAt(i).s1);
    storeRun<4>(out.s1, x, y, row, 3 * count);
  }
  if (out.s2.data) {
    float row[kSamples];
#pragma unroll
    for (int i = 0; i < kSamples; ++i) row[i] = static_cast<float>(sumsAt(i).s2);
    storeRun<4>(out.s2, x, y, row, 3 * count);
  }
  // The filtered loop (in the kernel with the products), one for each choice of what it stores,
  // picked once a row, makes the luminance for the DoLP loop too.
  const bool filtered = Products && out.wantsFiltered();
  if (filtered) {
    bool most = out.maximum.data, at = out.polarizer.data;
    if (most && at)
      storeFilteredRow<true, true>(out, settings, sumsAt, lumaTo, x, y, count, maxv);
    else if (most)
      storeFilteredRow<true, false>(out, settings, sumsAt, lumaTo, x, y, count, maxv);
    else if (at)
      storeFilteredRow<false, true>(out, settings, sumsAt, lumaTo, x, y, count, maxv);
    else
      storeFilteredRow<false, false>(out, settings, sumsAt, lumaTo, x, y, count, maxv);
  } else if (out.s0.data) {
    T row[kSamples];
#pragma unroll
    for (int i = 0; i < kSamples; ++i) row[i] = static_cast<T>((sumsAt(i).sum + 2) >> 2);
    storeRun<4>(out.s0, x, y, row, 3 * count);
  }
  // The normals' loop only in the kernel with the products: without them no second loop is made.
  if constexpr (Products) {
    const bool normals = out.wantsNormals();
    if (filtered && normals) return storePolarizationRow<true>(out, settings, lumaFrom, x, y, count, maxv);
    if (filtered) {
      if (out.template wantsPolarization<false>())
        storePolarizationRow<false>(out, settings, lumaFrom, x, y, count, maxv);
      return;
    }
    if (normals) return storePolarizationRow<true>(out, settings, lumaAt, x, y, count, maxv);
  }
  if (out.template wantsPolarization<false>()) storePolarizationRow<false>(out, settings, lumaAt, x, y, count, maxv);
}

// Colour sensors. C00..C11: the Bayer colours of a quad (template, so nothing is selected at run
// time). `out.angle` is in block-position order (the launcher reorders it). Every position's RGB
// rows are staged, then written out after one barrier, and the Stokes planes, when wanted, made
// from the staged values.
// Blocks an SM keeps of the 8-bit angle kernel (its staging in the tile, 13.8 KB of shared memory a
// block): ten where shared memory holds them (sm_80 and later), six on Xavier's 96 KB (asking for
// ten there squeezes the registers into spills). With the Stokes planes, seven (72 registers):
// left to itself ptxas takes 77 (from packed raw) or, with the polarizers' images, 107, and held
// to eight blocks it spills; five on Xavier (CUDA 11.2 spills at six).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kAngleBlocksPerSm = 6, kStokesBlocksPerSm = 5;
#else
constexpr int kAngleBlocksPerSm = 10, kStokesBlocksPerSm = 7;
#endif
template <bool Stokes, class T> constexpr int colourBlocksPerSm() {
  if (!Staging<T>::kInTile) return 1;
  return Stokes ? kStokesBlocksPerSm : kAngleBlocksPerSm;
}

template <int C00, int C10, int C01, int C11, bool Stokes, bool Products, class T, bool kWideRaw>
__global__ void __launch_bounds__(kThreads, colourBlocksPerSm<Stokes, T>())
    demosaicColour(Settings s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out,
                   AnglePositions positions) {
  using Pair = PairOf<T>;
  __shared__ __align__(16) Tile tile;
  __shared__ __align__(16) T wideStaging[Staging<T>::kInTile ? 16 : 4 * Staging<T>::kPlane];
  Staging<T> staged = Staging<T>::kInTile
                          ? Staging<T>{reinterpret_cast<T*>(tile), static_cast<int>(sizeof(tile[0]) / sizeof(T))}
                          : Staging<T>{wideStaging, 2 * Staging<T>::kPlane};
  int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  loadTile<T, kWideRaw>(tile, s, raw, x0, y0, subW, subH);
  __syncthreads();
  int x = x0 + kSpanX * threadIdx.x, y = y0 + 2 * threadIdx.y;  // the thread's first pixel
  int count = y < subH ? min(kSpanX, subW - x) : 0;  // its pixels a row inside the image (sub-image sizes are even)
  int maxv = sizeof(T) == 1 ? 255 : maxValue(s.format);
#pragma unroll
  for (int row = 0; row < 2; ++row) {  // polarizer row: positions 2 * row (lane 0) and 2 * row + 1 (lane 1)
    Pair window[6][kSpanX + 4];
    loadWindow(&tile[row][2 * threadIdx.y + 2][kTileLead + kSpanX * threadIdx.x], window);
    if (Staging<T>::kInTile) __syncthreads();  // this polarizer row's tile rows are read: staging goes there
#pragma unroll
    for (int qy = 0; qy < 2; ++qy) {  // a pixel row at a time, staged as soon as made
      Pair rgb[kSpanX][3];
#pragma unroll
      for (int qx = 0; qx < kSpanX; ++qx) {
        auto p = [&](int dx, int dy) { return window[qy + dy + 2][qx + dx + 2]; };
        Pair(&px)[3] = rgb[qx];
        if (qx % 2 == 0 && qy == 0) mhcPixel<C00, C10, C01>(p, maxv, px);
        if (qx % 2 == 1 && qy == 0) mhcPixel<C10, C00, C11>(p, maxv, px);
        if (qx % 2 == 0 && qy == 1) mhcPixel<C01, C11, C00>(p, maxv, px);
        if (qx % 2 == 1 && qy == 1) mhcPixel<C11, C01, C10>(p, maxv, px);
      }
      if (count <= 0) continue;
      int sy = 2 * threadIdx.y + qy, sx = kSpanX * 3 * threadIdx.x;
      // Every position, wanted or not: the Stokes planes are made from all four, and testing
      // the planes cost more than the stores.
      stagePiece(staged.row(2 * row, sy) + sx, staged.row(2 * row + 1, sy) + sx, rgb);
    }
  }
  __syncthreads();
  storeStaged(staged, out.angle, x0, y0, subW, subH);
  if constexpr (Stokes) {
    // Every thread's reads of the staged rows done before the filtered loop writes over them.
    if (Products && out.wantsFiltered()) __syncthreads();
    // The kernel with the products keeps one copy of a row's code: two outgrew the instruction cache.
    if (count > 0)
#pragma unroll(Products ? 1 : 2)
      for (int qy = 0; qy < 2; ++qy)
        storeStokesRow<Products>(out, s, positions, staged, 2 * threadIdx.y + qy, kSpanX * 3 * threadIdx.x, x, y + qy,
                                 count, maxv);
  }
}

template <int C00, int C10, int C01, int C11, class T, bool kWideRaw>
void launchColourFrom(const Settings& s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out,
                      const AnglePositions& positions, cudaStream_t stream) {
  dim3 block(kThreadsX, kThreadsY), grid((subW + kTileW - 1) / kTileW, (subH + kTileH - 1) / kTileH);
  if (out.wantsProducts())
    demosaicColour<C00, C10, C01, C11, true, true, T, kWideRaw>
        <<<grid, block, 0, stream>>>(s, raw, subW, subH, out, positions);
  else if (out.wantsStokes())
    demosaicColour<C00, C10, C01, C11, true, false, T, kWideRaw>
        <<<grid, block, 0, stream>>>(s, raw, subW, subH, out, positions);
  else
    demosaicColour<C00, C10, C01, C11, false, false, T, kWideRaw>
        <<<grid, block, 0, stream>>>(s, raw, subW, subH, out, positions);
}

// 16-bit planes come from wide raw; 8-bit ones from mono8, or from wider raw cut to 8 bits.
template <int C00, int C10, int C01, int C11, class T>
void launchColour(const Settings& s, ImageView<const uint8_t> raw, int subW, int subH, Planes<T> out,
                  const AnglePositions& positions, cudaStream_t stream) {
  if constexpr (sizeof(T) == 2)
    launchColourFrom<C00, C10, C01, C11, T, true>(s, raw, subW, subH, out, positions, stream);
  else if (s.format != RawFormat::mono8)
    launchColourFrom<C00, C10, C01, C11, T, true>(s, raw, subW, subH, out, positions, stream);
  else
    launchColourFrom<C00, C10, C01, C11, T, false>(s, raw, subW, subH, out, positions, stream);
}

// Mono, half resolution: a thread per four super-pixels side by side, so that 8 and 16-bit raw
// rows (when aligned) are read a vector at a time and every plane (when aligned) written four
// pixels at a time (faster than one or eight a thread). A row's last group may be partial.
constexpr int kMonoGroup = 4;

template <class T, bool Products> __global__ void demosaicMonoHalf(Settings s, ImageView<const uint8_t> raw, int outW,
                                                                   int outH, Planes<T> out, bool vectorRaw) {
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
    } else if (whole && vectorRaw && isPacked(s.format)) {  // 8 packed samples
      uint4 v = unpackChunk(s.format, raw.row(2 * y + r) + x0 / 4 * packedChunkBytes(s.format));
      uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < kMonoGroup; ++i)
        sample[r][2 * i] = static_cast<int>(words[i] & 0xFFFFu),
                      sample[r][2 * i + 1] = static_cast<int>(words[i] >> 16);
    } else if (whole && vectorRaw) {
      auto v = *reinterpret_cast<const Vector<uint16_t, 2 * kMonoGroup>*>(raw.row(2 * y + r) + 4 * x0);
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i) sample[r][i] = v.v[i];
    } else {
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i)
        sample[r][i] = x0 + i / 2 < outW ? rawSample(raw, s.format, 2 * x0 + i, 2 * y + r) : 0;
    }
    if (s.sampleShift)
#pragma unroll
      for (int i = 0; i < 2 * kMonoGroup; ++i) sample[r][i] = (sample[r][i] >> s.sampleShift) & 0xFF;
  }
  int count = min(kMonoGroup, outW - x0);
  const uint8_t* at = s.layout.angleAt;
  bool polarization = out.template wantsPolarization<Products>();
  int maxv = sampleMax(s);
  T angle[4][kMonoGroup], s0[kMonoGroup], minimum[kMonoGroup], maximum[kMonoGroup], polarizer[kMonoGroup];
  float s1[kMonoGroup], s2[kMonoGroup], dolpRun[kMonoGroup], aolpRun[kMonoGroup], normals[3 * kMonoGroup];
  uint8_t visual[3 * kMonoGroup], normalColours[3 * kMonoGroup];
#pragma unroll
  for (int i = 0; i < kMonoGroup; ++i) {
    int p0 = sample[0][2 * i], p1 = sample[0][2 * i + 1], p2 = sample[1][2 * i],
        p3 = sample[1][2 * i + 1];  // block positions, row-major
    int value[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // selects, not an array indexed at run time (local memory)
      value[k] = at[0] == k ? p0 : at[1] == k ? p1 : at[2] == k ? p2 : p3;
      angle[k][i] = static_cast<T>(value[k]);
    }
    MonoStokes<T, Products> d(value, s, out, polarization, maxv);
    s0[i] = d.s0, s1[i] = d.s1, s2[i] = d.s2, dolpRun[i] = d.dolp, aolpRun[i] = d.aolp;
    minimum[i] = d.minimum, maximum[i] = d.maximum, polarizer[i] = d.polarizer;
#pragma unroll
    for (int c = 0; c < 3; ++c)
      visual[3 * i + c] = d.visual[c], normals[3 * i + c] = d.normal[c], normalColours[3 * i + c] = d.normalColour[c];
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
  if constexpr (Products) {
    if (out.minimum.data) storeRun<kMonoGroup>(out.minimum, x0, y, minimum, count);
    if (out.maximum.data) storeRun<kMonoGroup>(out.maximum, x0, y, maximum, count);
    if (out.polarizer.data) storeRun<kMonoGroup>(out.polarizer, x0, y, polarizer, count);
    if (out.normals.data) storeRun<kMonoGroup>(out.normals, x0, y, normals, 3 * count);
    if (out.normalsVisual.data) storeRun<kMonoGroup>(out.normalsVisual, x0, y, normalColours, 3 * count);
  }
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
    auto at = [&](int sxi, int syi) {
      return sampleOf(raw, s, 2 * reflect101(sxi, subW) + ox, 2 * reflect101(syi, subH) + oy);
    };
    int sum = at(xa, ya) + (xb != xa ? at(xb, ya) : 0) + (yb != ya ? at(xa, yb) : 0) + (n == 4 ? at(xb, yb) : 0);
    value[k] = (sum + n / 2) / n;
    if (out.angle[k].data) out.angle[k].at(x, y) = static_cast<T>(value[k]);
  }
  MonoStokes<T, true> d(value, s, out, out.wantsPolarization(), sampleMax(s));
  if (out.s0.data) out.s0.at(x, y) = d.s0;
  if (out.s1.data) out.s1.at(x, y) = d.s1;
  if (out.s2.data) out.s2.at(x, y) = d.s2;
  if (out.dolp.data) out.dolp.at(x, y) = d.dolp;
  if (out.aolp.data) out.aolp.at(x, y) = d.aolp;
  if (out.minimum.data) out.minimum.at(x, y) = d.minimum;
  if (out.maximum.data) out.maximum.at(x, y) = d.maximum;
  if (out.polarizer.data) out.polarizer.at(x, y) = d.polarizer;
  for (int c = 0; c < 3; ++c) {
    if (out.aolpVisual.data) out.aolpVisual.at(x, y, c) = d.visual[c];
    if (out.normals.data) out.normals.at(x, y, c) = d.normal[c];
    if (out.normalsVisual.data) out.normalsVisual.at(x, y, c) = d.normalColour[c];
  }
}

}  // namespace

template <class T> void launchDemosaic(const Settings& s, ImageView<const uint8_t> raw, int rawWidth,
                                       const Planes<T>& out, cudaStream_t stream) {
  if (s.mosaic == Mosaic::rggb) {
    int subW = rawWidth / 2, subH = raw.height / 2;
    // The kernel works in block positions: angle planes reordered to them, each angle's position known.
    Planes<T> byPosition = out;
    AnglePositions positions{};
    for (int position = 0; position < 4; ++position) {
      int k = s.layout.angleAt[position];
      byPosition.angle[position] = out.angle[k];
      positions.of[k] = position;
    }
    const uint8_t* c = s.layout.colourAt;
    if (c[0] == R)
      launchColour<R, G, G, B>(s, raw, subW, subH, byPosition, positions, stream);
    else if (c[0] == B)
      launchColour<B, G, G, R>(s, raw, subW, subH, byPosition, positions, stream);
    else if (c[1] == R)
      launchColour<G, R, B, G>(s, raw, subW, subH, byPosition, positions, stream);
    else
      launchColour<G, B, R, G>(s, raw, subW, subH, byPosition, positions, stream);
  } else {
    int outW = s.fullResolution ? rawWidth : rawWidth / 2, outH = s.fullResolution ? raw.height : raw.height / 2;
    dim3 block(32, 8), grid((outW + 31) / 32, (outH + 7) / 8);
    if (s.fullResolution) {
      demosaicMonoFull<T><<<grid, block, 0, stream>>>(s, raw, outW, outH, out);
    } else {
      // A group's raw run: 8 bytes (mono8), 16 (16-bit samples), or a packed chunk (10 or 12 bytes
      // at a multiple of its size: 2 or 4-byte aligned in 4-byte aligned rows).
      bool vectorRaw = isPacked(s.format) ? raw.rowsAligned(4)
                                          : raw.rowsAligned(2 * kMonoGroup * (s.format == RawFormat::mono8 ? 1 : 2));
      dim3 groups((outW + 32 * kMonoGroup - 1) / (32 * kMonoGroup), (outH + 7) / 8);
      if (out.wantsProducts())
        demosaicMonoHalf<T, true><<<groups, block, 0, stream>>>(s, raw, outW, outH, out, vectorRaw);
      else
        demosaicMonoHalf<T, false><<<groups, block, 0, stream>>>(s, raw, outW, outH, out, vectorRaw);
    }
  }
  PP_CUDA_CHECK_LAUNCH();
}

template void launchDemosaic<uint8_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint8_t>&,
                                      cudaStream_t);
template void launchDemosaic<uint16_t>(const Settings&, ImageView<const uint8_t>, int, const Planes<uint16_t>&,
                                       cudaStream_t);

}  // namespace pp::polar
