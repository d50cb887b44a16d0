#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device.hpp"
#include "cuda/dof_gather.cuh"
#include "cuda/dof_math.hpp"
#include "cuda/shared_memory.cuh"

namespace pp::dof {

namespace {

constexpr int kTapsTable = (kMaxGatherRadius + 1) * (kMaxGatherRadius + 1);  // radius r at offset r*r, 2r+1 taps
constexpr int kTapRow = 2 * kMaxGatherRadius + 1;
// For each radius r: its taps and those of r + 1 side by side, zero-padded to +-kMaxGatherRadius
// around the centre (one load a tap, no branch on the radius). Global, not constant, memory: the
// blocks copy it with coalesced loads, where constant loads at different addresses serialize.
__device__ float2 gRadiusPairTaps[(kMaxGatherRadius + 1) * kTapRow];
// For each radius, the sum of its 2D weights (the product of the taps): an unmasked gather's divisor.
__device__ float gRadiusWeight[kMaxGatherRadius + 1];

constexpr int kBlockX = 32, kBlockY = 8;  // a warp a row of pixels

// The same float operations as dof_cpu.cpp's depthForImage.
__device__ __forceinline__ int planeIndex(int v, const DepthPlane& p) {
  if (p.scale == 1) return v;  // the usual case, and no integer division
  return p.larger ? v * p.scale : v / p.scale;
}
__device__ __forceinline__ float depthIn(const uint8_t* planeRow, int sx, const DepthPlane& p) {
  float v = p.u16 ? stereo::disparityPixels(reinterpret_cast<const uint16_t*>(planeRow)[sx])
                  : reinterpret_cast<const float*>(planeRow)[sx];
  if (p.disparity) v = v > 0 ? p.baselineFocal / v : INFINITY;
  return v;
}
__device__ __forceinline__ float depthAt(const ImageView<const uint8_t>& plane, const DepthPlane& p, int x, int y) {
  return depthIn(plane.row(planeIndex(y, p)), planeIndex(x, p), p);
}
// A blended channel value as the CPU reference stores it: rounded and clamped to 0..255.
__device__ __forceinline__ uint8_t toByte(float v) { return static_cast<uint8_t>(fminf(fmaxf(v + 0.5f, 0.f), 255.f)); }

// A pixel as the shared tile holds it: its channels as floats and its depth (invalid as +inf, so
// "at or behind" is one comparison); grey in a float2, so that a tap moves half the bytes of RGB's.
template <int C> using Sample = std::conditional_t<C == 3, float4, float2>;
__device__ __forceinline__ float depthOf(const float4& q) { return q.w; }
__device__ __forceinline__ float depthOf(const float2& q) { return q.y; }
template <int C> __device__ __forceinline__ Sample<C> sampleOf(const uint8_t* px, float z) {
  if constexpr (C == 3)
    return make_float4(px[0], px[1], px[2], z);
  else
    return make_float2(px[0], z);
}
// Channel c of a sample.
__device__ __forceinline__ float channel(const float4& q, int c) { return c == 0 ? q.x : c == 1 ? q.y : q.z; }
__device__ __forceinline__ float channel(const float2& q, int) { return q.x; }

// A pixel's running sums for its two radii.
template <int C> struct Sums {
  float num0[C] = {}, num1[C] = {}, den0 = 0.f, den1 = 0.f;
};

// One tap with the weights (w0, w1) of its two radii, unless it lies in front of the pixel's band
// (a select, not a branch: no divergence).
template <int C>
__device__ __forceinline__ void gatherTap(Sums<C>& s, const Sample<C>& q, float w0, float w1, float edge) {
  bool keep = depthOf(q) >= edge;
  w0 = keep ? w0 : 0.f, w1 = keep ? w1 : 0.f;
#pragma unroll
  for (int c = 0; c < C; ++c) s.num0[c] += w0 * channel(q, c), s.num1[c] += w1 * channel(q, c);
  s.den0 += w0, s.den1 += w1;
}

// The taps of tile rows `above` and `below` (kTwoRows; else the centre row alone), with their row
// weights wy, out to dx = +-reach.
template <int C, bool kTwoRows> __device__ __forceinline__ void gatherRow(Sums<C>& s, const Sample<C>* above,
                                                                          const Sample<C>* below, const float2* taps,
                                                                          float2 wy, int reach, float edge) {
  float w0 = wy.x * taps[0].x, w1 = wy.y * taps[0].y;
  gatherTap<C>(s, above[0], w0, w1, edge);
  if (kTwoRows) gatherTap<C>(s, below[0], w0, w1, edge);
  for (int dx = 1; dx <= reach; ++dx) {
    float2 wx = taps[dx];
    w0 = wy.x * wx.x, w1 = wy.y * wx.y;
    gatherTap<C>(s, above[-dx], w0, w1, edge);
    gatherTap<C>(s, above[dx], w0, w1, edge);
    if (kTwoRows) {
      gatherTap<C>(s, below[-dx], w0, w1, edge);
      gatherTap<C>(s, below[dx], w0, w1, edge);
    }
  }
}

// The taps of tile rows `above` and `below` when none is masked: the two radii's weights, already
// divided by their sums and mixed, make one weight (a, b scale this row's pair).
template <int C, bool kTwoRows>
__device__ __forceinline__ void gatherOpenRow(float (&num)[C], const Sample<C>* above, const Sample<C>* below,
                                              const float2* taps, float a, float b, int reach) {
  // The two taps at +-dx share a weight: their sum is multiplied once.
  auto add = [&](float w, const Sample<C>& q, const Sample<C>& p) {
#pragma unroll
    for (int c = 0; c < C; ++c) num[c] += w * (channel(q, c) + channel(p, c));
  };
  float w = a * taps[0].x + b * taps[0].y;
  if (kTwoRows) {
    add(w, above[0], below[0]);
  } else {
#pragma unroll
    for (int c = 0; c < C; ++c) num[c] += w * channel(above[0], c);
  }
#pragma unroll 1
  for (int dx = 1; dx <= reach; ++dx) {
    w = a * taps[dx].x + b * taps[dx].y;
    add(w, above[-dx], above[dx]);
    if (kTwoRows) add(w, below[-dx], below[dx]);
  }
}

// The open gather of a warp separably, radius by radius from `first` to `last`: the 2D Gaussian of
// radius q is the product of its taps, so each lane first sums the columns of the warp's window
// (x0 - q ... x0 + 31 + q, a column a lane in up to three chunks) down rows y - q ... y + q, then
// each pixel sums its 2q + 1 columns' sums, taken from the lanes that hold them, and adds them with
// its weight for q: a where q is its r0, b where q is its r1 (the open gather's two radii, their
// 2D sums divided out). Each radius costs about 4q + 2 multiply-adds a pixel instead of the
// (2q + 1)^2 taps of the 2D gather. `row` is the warp's tile row, `radiusTaps` the pair table.
template <int C> __device__ __forceinline__ void gatherSeparably(float (&num)[C], const Sample<C>* row, int tileW,
                                                                 int halo, const float2* radiusTaps, int first,
                                                                 int last, int r0, int r1, float a, float b) {
  constexpr int kChunks = (32 + 2 * kMaxGatherRadius + 31) / 32;
  const int lane = threadIdx.x;
#pragma unroll
  for (int c = 0; c < C; ++c) num[c] = 0.f;
#pragma unroll 1
  for (int q = first; q <= last; ++q) {
    const float weight = (q == r0 ? a : 0.f) + (q == r1 ? b : 0.f);
    if (!__any_sync(0xffffffffu, weight != 0.f)) continue;  // a radius no pixel mixes (t = 0)
    const float2* taps = radiusTaps + q * kTapRow + kMaxGatherRadius;
    const int chunks = (32 + 2 * q + 31) / 32;
    float column[kChunks][C];
#pragma unroll
    for (int m = 0; m < kChunks; ++m) {
#pragma unroll
      for (int c = 0; c < C; ++c) column[m][c] = 0.f;
      if (m >= chunks) continue;
      // Window column j at tile column halo - q + j; lanes past the window's end sum a column no
      // pixel takes (clamped inside the tile).
      const Sample<C>* at = row + min(halo - q + lane + 32 * m, tileW - 1);
#pragma unroll
      for (int c = 0; c < C; ++c) column[m][c] = taps[0].x * channel(at[0], c);
#pragma unroll 1
      for (int dy = 1; dy <= q; ++dy) {
        const float w = taps[dy].x;
        const Sample<C>&above = at[-dy * tileW], &below = at[dy * tileW];
#pragma unroll
        for (int c = 0; c < C; ++c) column[m][c] += w * (channel(above, c) + channel(below, c));
      }
    }
    float sum[C] = {};
#pragma unroll 1
    for (int dx = -q; dx <= q; ++dx) {
      const int j = lane + q + dx, from = j % 32, chunk = j / 32;
      const float w = taps[dx < 0 ? -dx : dx].x;
#pragma unroll
      for (int m = 0; m < kChunks; ++m) {
        if (m >= chunks) break;  // the same for the whole warp
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const float v = __shfl_sync(0xffffffffu, column[m][c], from);
          if (chunk == m) sum[c] += w * v;
        }
      }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) num[c] += weight * sum[c];
  }
}

// A warp's window columns' sums for one depth band, both radii: (num0, den0, num1, den1) in grey,
// (num0 RGB, den0) and (num1 RGB, den1) in colour; a float4 load each.
template <int C> struct ColumnSums { float4 v[C == 3 ? 2 : 1]; };
// The column sums' room a warp needs for radii up to rMax, and where they start in the dynamic
// shared memory (in float4s, after the tile of Samples and the radius pairs).
__host__ __device__ constexpr int columnSlots(int rMax) { return 32 + 2 * rMax; }
__host__ __device__ constexpr size_t columnsOffset(int rMax, size_t sample) {
  return (sample * (kBlockX + 2 * rMax) * (kBlockY + 2 * rMax) + sizeof(float2) * (rMax + 1) * kTapRow + 15) / 16;
}
// What a step of the masked separable gather (a row of a chunk of window columns, or a column of
// the row pass, for one band) costs against a tap of the 2D masked gather: the warp takes the
// separable way where kSeparableCost x its steps <= kTapCost x its taps (set by timing the graphs'
// cases with a few ratios; see stages/dof/PERFORMANCE.md).
template <int C> constexpr int kSeparableCost = C == 3 ? 25 : 15;
template <int C> constexpr int kTapCost = C == 3 ? 14 : 10;

// Adds w (two radii's weights) times the sums s (numerators and denominator of the kept taps) to acc.
template <int C> __device__ __forceinline__ void addWeighted(ColumnSums<C>& acc, float2 w, const ColumnSums<C>& s) {
  if constexpr (C == 3) {
    acc.v[0].x += w.x * s.v[0].x, acc.v[0].y += w.x * s.v[0].y, acc.v[0].z += w.x * s.v[0].z;
    acc.v[0].w += w.x * s.v[0].w;
    acc.v[1].x += w.y * s.v[1].x, acc.v[1].y += w.y * s.v[1].y, acc.v[1].z += w.y * s.v[1].z;
    acc.v[1].w += w.y * s.v[1].w;
  } else {
    acc.v[0].x += w.x * s.v[0].x, acc.v[0].y += w.x * s.v[0].y, acc.v[0].z += w.y * s.v[0].z;
    acc.v[0].w += w.y * s.v[0].w;
  }
}
// (1 - t) num0 / den0 + t num1 / den1 of channel c, as the 2D gather blends its two radii.
template <int C> __device__ __forceinline__ float blended(const ColumnSums<C>& s, float t, int c) {
  if constexpr (C == 3)
    return (1.f - t) * (channel(s.v[0], c) / s.v[0].w) + t * (channel(s.v[1], c) / s.v[1].w);
  else
    return (1.f - t) * (s.v[0].x / s.v[0].y) + t * (s.v[0].z / s.v[0].w);
}
// The kept part of a tap (keptOne) or of two taps at the same weight (keptPair), both radii alike:
// (values, count) as (v, n, v, n) in grey, (RGB, n) twice in colour.
template <int C> __device__ __forceinline__ ColumnSums<C> keptSums(float3 v, float n) {
  ColumnSums<C> s;
  if constexpr (C == 3)
    s.v[0] = s.v[1] = make_float4(v.x, v.y, v.z, n);
  else
    s.v[0] = make_float4(v.x, n, v.x, n);
  return s;
}
template <int C> __device__ __forceinline__ float3 valuesOf(const Sample<C>& p) {
  return make_float3(channel(p, 0), channel(p, C == 3 ? 1 : 0), channel(p, C == 3 ? 2 : 0));
}
template <int C> __device__ __forceinline__ ColumnSums<C> keptOne(const Sample<C>& p, float edge) {
  const bool k = depthOf(p) >= edge;
  const float3 v = valuesOf<C>(p);
  return keptSums<C>(make_float3(k ? v.x : 0.f, k ? v.y : 0.f, k ? v.z : 0.f), k ? 1.f : 0.f);
}
template <int C> __device__ __forceinline__ ColumnSums<C> keptPair(const Sample<C>& p, const Sample<C>& q, float edge) {
  const bool kp = depthOf(p) >= edge, kq = depthOf(q) >= edge;
  const float3 a = valuesOf<C>(p), b = valuesOf<C>(q);
  return keptSums<C>(make_float3((kp ? a.x : 0.f) + (kq ? b.x : 0.f), (kp ? a.y : 0.f) + (kq ? b.y : 0.f),
                                 (kp ? a.z : 0.f) + (kq ? b.z : 0.f)),
                     (kp ? 1.f : 0.f) + (kq ? 1.f : 0.f));
}

// Calls f(edge, r0, members) for each depth band of the warp's lanes in `pending`: the lanes with
// the same near edge and lower radius, which keep the same taps.
template <class F> __device__ __forceinline__ void forEachBand(unsigned pending, float edge, int r0, const F& f) {
  while (pending) {
    const int leader = __ffs(pending) - 1;
    const float e = __shfl_sync(0xffffffffu, edge, leader);
    const int b0 = __shfl_sync(0xffffffffu, r0, leader);
    const unsigned members = __ballot_sync(
        0xffffffffu, (pending >> threadIdx.x & 1) && __float_as_uint(edge) == __float_as_uint(e) && r0 == b0);
    pending &= ~members;
    f(e, b0, members);
  }
}

// The masked gather of a warp separably, depth band by depth band: the taps a pixel keeps are those
// at or beyond its band's near edge, the same for every pixel of the band, so a band's kept taps
// form one masked layer, and the 2D Gaussian over it is a column pass and a row pass. For each band
// the lanes sum the window's columns (x0 - r1 ... x0 + 31 + r1, a column a lane in up to three
// chunks) of the kept values and the kept count down rows y - r1 ... y + r1 with both radii's
// vertical taps, leave them in the warp's `columns`, and each of the band's pixels sums its
// 2 r1 + 1 columns with the horizontal taps and hands its (num0, den0, num1, den1) to store().
template <int C, class Store>
__device__ __forceinline__ void gatherMaskedSeparably(const Sample<C>* row, int tileW, int halo,
                                                      const float2* radiusTaps, ColumnSums<C>* columns,
                                                      unsigned pending, float edge, int r0, int rMax,
                                                      const Store& store) {
  const int lane = threadIdx.x;
  forEachBand(pending, edge, r0, [&](float e, int b0, unsigned members) {
    const int b1 = min(b0 + 1, rMax);
    const float2* taps = radiusTaps + b0 * kTapRow + kMaxGatherRadius;  // (radius b0's tap, radius b1's)
    // Window column j at tile column halo - b1 + j: those of the band's pixels, first to last.
    const int first = __ffs(members) - 1, end = 32 - __clz(members) + 2 * b1;
    for (int j = first + lane; j < end; j += 32) {
      const Sample<C>* at = row + halo - b1 + j;
      ColumnSums<C> sums{};
      addWeighted<C>(sums, taps[0], keptOne<C>(at[0], e));
#pragma unroll 1
      for (int dy = 1; dy <= b1; ++dy) addWeighted<C>(sums, taps[dy], keptPair<C>(at[-dy * tileW], at[dy * tileW], e));
      columns[j] = sums;
    }
    __syncwarp();
    if (members >> lane & 1) {  // the band's pixels: their columns j = lane + b1 + dx, dx = -b1 ... b1
      const ColumnSums<C>* centre = columns + lane + b1;
      ColumnSums<C> mine{};
      addWeighted<C>(mine, taps[0], centre[0]);
#pragma unroll 1
      for (int dx = 1; dx <= b1; ++dx)
        addWeighted<C>(mine, taps[dx], centre[-dx]), addWeighted<C>(mine, taps[dx], centre[dx]);
      store(mine);
    }
    __syncwarp();
  });
}

// Shared tile: the block's pixels and a halo of rMax (replicated at the borders) as Samples. Five
// blocks an SM (48 registers): at four, the open gather's gain was gone.
template <int C> __global__ void __launch_bounds__(kBlockX* kBlockY, 5)
    gather(ImageView<const uint8_t> image, ImageView<const uint8_t> depth, ImageView<uint8_t> out, GatherSettings s) {
  extern __shared__ float4 sharedMemory[];
  Sample<C>* tile = reinterpret_cast<Sample<C>*>(sharedMemory);
  int halo = s.rMax, tileW = kBlockX + 2 * halo, tileH = kBlockY + 2 * halo;
  // After the tile: the radius pairs 0..rMax, the last one paired with itself; after them each
  // warp's column sums for the masked separable gather.
  float2* radiusTaps = reinterpret_cast<float2*>(tile + tileW * tileH);
  ColumnSums<C>* columns = reinterpret_cast<ColumnSums<C>*>(sharedMemory + columnsOffset(s.rMax, sizeof(Sample<C>))) +
                           threadIdx.y * columnSlots(s.rMax);
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < (s.rMax + 1) * kTapRow; i += kBlockX * kBlockY) {
    float2 pair = gRadiusPairTaps[i];
    if (i >= s.rMax * kTapRow) pair.y = pair.x;
    radiusTaps[i] = pair;
  }
  // The focus: the nearest valid depth among the focus pixels (read here, so the host never waits).
  float nearest = INFINITY;
#pragma unroll
  for (int i = 0; i < kMaxFocusPixels; ++i) {  // constant indices keep the settings in parameter space
    if (i >= s.focusCount) break;
    float f = depthAt(depth, s.plane, s.focusX[i], s.focusY[i]);
    if (validDepth(f)) nearest = fminf(nearest, f);
  }
  float focus = isfinite(nearest) ? nearest : s.focusDepth;
  // The tile a row a warp: the row's clamped y and its image and depth rows are worked out once.
  int x0 = blockIdx.x * kBlockX, y0 = blockIdx.y * kBlockY;
  float nearestInTile = INFINITY;
  for (int ty = threadIdx.y; ty < tileH; ty += kBlockY) {
    int y = min(max(y0 - halo + ty, 0), image.height - 1);
    const uint8_t* pixels = image.row(y);
    const uint8_t* planeRow = depth.row(planeIndex(y, s.plane));
#pragma unroll 1
    for (int tx = threadIdx.x; tx < tileW; tx += kBlockX) {
      int x = min(max(x0 - halo + tx, 0), image.width - 1);
      float z = depthIn(planeRow, planeIndex(x, s.plane), s.plane);
      const uint8_t* px = pixels + x * C;
      z = validDepth(z) ? z : INFINITY;
      nearestInTile = fminf(nearestInTile, z);
      tile[ty * tileW + tx] = sampleOf<C>(px, z);
    }
  }
  // The tile's nearest depth: a warp whose pixels' band edges are all at or in front of it masks
  // no tap, and takes the open gather (about 7 instructions a tap instead of 12).
  __shared__ float warpNearest[kBlockY];
  for (int offset = 16; offset > 0; offset /= 2)
    nearestInTile = fminf(nearestInTile, __shfl_xor_sync(0xffffffffu, nearestInTile, offset));
  if (threadIdx.x == 0) warpNearest[threadIdx.y] = nearestInTile;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kBlockY; ++i) nearestInTile = fminf(nearestInTile, warpNearest[i]);
  int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  bool inside = x < image.width && y < image.height;
  int cx = threadIdx.x + halo, cy = threadIdx.y + halo;
  const Sample<C>* centre = tile + cy * tileW + cx;
  float z = depthOf(*centre);  // the pixel's own depth, invalid as +inf
  float rho = blurRadius(focus, s.k, s.rMax, z);
  int r0 = static_cast<int>(floorf(rho)), r1 = min(r0 + 1, s.rMax);
  float t = rho - static_cast<float>(r0), edge = bandEdge(focus, s.k, z, r0);
  // Loop to the warp's largest radius so its threads stay together; weights outside a radius are 0.
  int reach = inside ? r1 : 0;
  for (int offset = 16; offset > 0; offset /= 2) reach = max(reach, __shfl_xor_sync(0xffffffffu, reach, offset));
  const float2* taps = radiusTaps + r0 * kTapRow + kMaxGatherRadius;
  if (__all_sync(0xffffffffu, !inside || nearestInTile >= edge)) {
    const float a = (1.f - t) / gRadiusWeight[r0], b = t / gRadiusWeight[r1];
    // The radii the warp's pixels mix: where they are few, separable sums over each cost less
    // than the 2D taps (about 4q + 2 against (2q + 1)^2 a pixel, the shuffles and the window's
    // extra columns making a separable radius cost about a fifth of the 2D gather's at radius 9).
    // The largest is `reach`.
    int first = inside ? r0 : s.rMax;
    for (int offset = 16; offset > 0; offset /= 2) first = min(first, __shfl_xor_sync(0xffffffffu, first, offset));
    if (reach - first + 1 <= max(1, (2 * reach + 1) / 5)) {
      float num[C];
      gatherSeparably<C>(num, tile + cy * tileW, tileW, halo, radiusTaps, first, reach, r0, r1, a, b);
      if (inside)
        for (int c = 0; c < C; ++c) out.at(x, y, c) = toByte(num[c]);
      return;
    }
    float num[C] = {};
    gatherOpenRow<C, false>(num, centre, centre, taps, a * taps[0].x, b * taps[0].y, reach);
    for (int dy = 1; dy <= reach; ++dy)
      gatherOpenRow<C, true>(num, centre - dy * tileW, centre + dy * tileW, taps, a * taps[dy].x, b * taps[dy].y,
                             reach);
    if (inside)
      for (int c = 0; c < C; ++c) out.at(x, y, c) = toByte(num[c]);
    return;
  }
  // Where the warp's pixels fall into few depth bands, the masked layers separably cost less than
  // the 2D taps: a band's steps are its chunks of window columns' rows and its row pass's columns.
  const unsigned pending = __ballot_sync(0xffffffffu, inside);
  int steps = 0;
  forEachBand(pending, edge, r0, [&](float, int b0, unsigned members) {
    const int b1 = min(b0 + 1, s.rMax), chunks = (32 - __clz(members) - __ffs(members) + 1 + 2 * b1 + 31) / 32;
    steps += (chunks + 1) * (2 * b1 + 1);
  });
  if (kSeparableCost<C> * steps <= kTapCost<C> * (2 * reach + 1) * (2 * reach + 1)) {
    gatherMaskedSeparably<C>(tile + cy * tileW, tileW, halo, radiusTaps, columns, pending, edge, r0, s.rMax,
                             [&](const ColumnSums<C>& kept) {
#pragma unroll
                               for (int c = 0; c < C; ++c) out.at(x, y, c) = toByte(blended(kept, t, c));
                             });
    return;
  }
  Sums<C> sums;
  // Weights from the zero-padded shared table: no branch on the radius, and threads of different
  // radii read different addresses at once (constant memory would serialize them). The Gaussians
  // are symmetric: one weight serves the taps at (+-dx, +-dy), so it is made and read once for four.
  gatherRow<C, false>(sums, centre, centre, taps, taps[0], reach, edge);
  for (int dy = 1; dy <= reach; ++dy)
    gatherRow<C, true>(sums, centre - dy * tileW, centre + dy * tileW, taps, taps[dy], reach, edge);
  if (!inside) return;
#pragma unroll
  for (int c = 0; c < C; ++c)
    out.at(x, y, c) = toByte((1.f - t) * (sums.num0[c] / sums.den0) + t * (sums.num1[c] / sums.den1));
}

}  // namespace

void uploadRadiusTaps(const float* taps, int count) {
  if (count != kTapsTable)
    throw std::invalid_argument("dof: the radius taps table holds " + std::to_string(kTapsTable) + " values, got " +
                                std::to_string(count));
  std::vector<float2> pairs((kMaxGatherRadius + 1) * kTapRow);
  auto tap = [&](int r, int d) { return std::abs(d) <= r ? taps[r * r + d + r] : 0.f; };
  for (int r = 0; r <= kMaxGatherRadius; ++r)
    for (int d = -kMaxGatherRadius; d <= kMaxGatherRadius; ++d)
      pairs[r * kTapRow + d + kMaxGatherRadius] = make_float2(tap(r, d), tap(std::min(r + 1, kMaxGatherRadius), d));
  PP_CUDA_CHECK(cudaMemcpyToSymbol(gRadiusPairTaps, pairs.data(), sizeof(float2) * pairs.size()));
  std::vector<float> weights(kMaxGatherRadius + 1);
  for (int r = 0; r <= kMaxGatherRadius; ++r) {
    float sum = 0.f;
    for (int d = -r; d <= r; ++d) sum += tap(r, d);
    weights[r] = sum * sum;
  }
  PP_CUDA_CHECK(cudaMemcpyToSymbol(gRadiusWeight, weights.data(), sizeof(float) * weights.size()));
  finishSynchronousCopies();
}

void launchDofGather(ImageView<const uint8_t> image, ImageView<const uint8_t> depth, ImageView<uint8_t> out,
                     const GatherSettings& s, cudaStream_t stream) {
  if (s.focusCount < 0 || s.focusCount > kMaxFocusPixels)
    throw std::invalid_argument("dof: at most " + std::to_string(kMaxFocusPixels) + " focus pixels");
  if (s.rMax < 0 || s.rMax > kMaxGatherRadius)
    throw std::invalid_argument("dof: r_max must be in [0, 31], got " + std::to_string(s.rMax));
  if (image.channels != 1 && image.channels != 3) throw std::invalid_argument("dof: 1 or 3 channels");
  const bool rgb = image.channels == 3;
  const size_t shared = 16 * columnsOffset(s.rMax, rgb ? sizeof(Sample<3>) : sizeof(Sample<1>)) +
                        (rgb ? sizeof(ColumnSums<3>) : sizeof(ColumnSums<1>)) * kBlockY * columnSlots(s.rMax);
  dim3 block(kBlockX, kBlockY), grid((image.width + kBlockX - 1) / kBlockX, (image.height + kBlockY - 1) / kBlockY);
  auto kernel = rgb ? gather<3> : gather<1>;
  allowSharedMemory(kernel, shared, ("dof: r_max " + std::to_string(s.rMax)).c_str());
  kernel<<<grid, block, shared, stream>>>(image, depth, out, s);
  PP_CUDA_CHECK_LAUNCH();
}

}  // namespace pp::dof
