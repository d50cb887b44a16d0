// Polarization arithmetic shared by the CPU reference and the CUDA kernels, so both compute the
// same function: the sensor layout, Malvar-He-Cutler coefficients, Stokes and the HSV visual.
#pragma once
#include <cmath>
#include <cstdint>

#include "cuda/float_rn.hpp"
#include "cuda/image_view.hpp"

namespace pp::polar {

constexpr float kPi = 3.14159265358979f;

enum class Mosaic : uint8_t { mono, rggb };  // polar_mono | polar_rggb
// How raw samples lie in the frame: one byte (mono8); one little-endian 16-bit word holding 10, 12
// or 16 bits (mono10, mono12, mono16); or packed, the plane then being the camera's bytes (u8):
// PFNC `p` packing, a bit stream lowest bits first (mono10p: 4 pixels in 5 bytes, mono12p: 2 in 3),
// or GigE Vision's older `Packed` one (mono10packed, mono12packed: 2 pixels in 3 bytes, the high
// bits of each pixel in a byte of its own and the low bits of both in the middle byte).
enum class RawFormat : uint8_t { mono8, mono10, mono12, mono16, mono10p, mono12p, mono10packed, mono12packed };
enum Colour : uint8_t { R = 0, G = 1, B = 2 };

// Which angle (index into kAngles order 0, 45, 90, 135) sits at each position of the 2x2 block,
// and which colour at each position of the 2x2 grid of blocks (colour sensors).
struct Layout {
  uint8_t angleAt[4] = {2, 1, 3, 0};   // IMX250MZR: row 0 = 90, 45; row 1 = 135, 0
  uint8_t colourAt[4] = {R, G, G, B};  // RGGB blocks
  PP_HD int angle(int x, int y) const { return angleAt[(y & 1) * 2 + (x & 1)]; }
  PP_HD int colour(int bx, int by) const { return colourAt[(by & 1) * 2 + (bx & 1)]; }
  // Offset of angle k inside its 2x2 block.
  PP_HD void offsetOf(int k, int& ox, int& oy) const {
    for (int i = 0; i < 4; ++i)
      if (angleAt[i] == k) ox = i & 1, oy = i >> 1;
  }
};

constexpr int kAngles[4] = {0, 45, 90, 135};

struct Settings {
  Mosaic mosaic = Mosaic::rggb;
  RawFormat format = RawFormat::mono8;
  Layout layout;
  bool fullResolution = false;                   // mono only
  float polarizerCos = 1.f, polarizerSin = 0.f;  // cos 2t, sin 2t of the virtual polarizer's angle t
  float refractiveIndex = 1.5f;                  // of the surface, for normals
  float minDolp = 0.02f;                         // normals: pixels less polarized than this are invalid
  // Bits each raw sample drops before the demosaic (depth u8 from wider raw: the top 8 of its
  // format's bits, as the camera's Mono8 would give); 0 keeps them all.
  uint8_t sampleShift = 0;
};

// The planes one pass can produce; empty views are skipped.
template <class T> struct Planes {
  ImageView<T> angle[4];             // 0, 45, 90, 135: u8/u16, 1 or 3 channels
  ImageView<T> s0;                   // S0 / 2 (the mean of the four angles) in the input's range
  ImageView<float> s1, s2;           // 1 or 3 channels
  ImageView<float> dolp, aolp;       // 1 channel (colour: from the luminance Stokes)
  ImageView<uint8_t> aolpVisual;     // RGB8
  ImageView<T> minimum, maximum;     // outputs min, max: (S0 -+ sqrt(S1^2 + S2^2)) / 2, like s0
  ImageView<T> polarizer;            // (S0 + S1 cos 2t + S2 sin 2t) / 2, like s0
  ImageView<float> normals;          // x, y, z (from the luminance Stokes); 0, 0, 0 where invalid
  ImageView<uint8_t> normalsVisual;  // RGB8: (x, y, z + 1) / 2; black where invalid
  // Planes that need the Stokes vector (every one but the angles).
  PP_HD bool wantsStokes() const {
    return s0.data || s1.data || s2.data || dolp.data || aolp.data || aolpVisual.data || minimum.data || maximum.data ||
           polarizer.data || normals.data || normalsVisual.data;
  }
  PP_HD bool wantsNormals() const { return normals.data || normalsVisual.data; }
  // Planes made from a pixel's (luminance) Stokes vector as a whole; a kernel without the products
  // (Products false) leaves the normals out without looking.
  template <bool Products = true> PP_HD bool wantsPolarization() const {
    return dolp.data || aolp.data || aolpVisual.data || (Products && wantsNormals());
  }
  // Planes made per channel beside s0.
  PP_HD bool wantsFiltered() const { return minimum.data || maximum.data || polarizer.data; }
  // The polarizers' images and the normals, made by kernels of their own.
  PP_HD bool wantsProducts() const { return wantsFiltered() || wantsNormals(); }
};

PP_HD int maxValue(RawFormat f) {
  switch (f) {
    case RawFormat::mono8: return 255;
    case RawFormat::mono10:
    case RawFormat::mono10p:
    case RawFormat::mono10packed: return 1023;
    case RawFormat::mono16: return 65535;
    default: return 4095;
  }
}
// Bits of a format's samples.
PP_HD int sampleBits(RawFormat f) {
  int bits = 0;
  for (int m = maxValue(f); m > 0; m >>= 1) ++bits;
  return bits;
}
// The largest sample the demosaic works on: 8-bit for mono8 and for samples cut to their top 8 bits.
PP_HD int sampleMax(const Settings& s) { return s.sampleShift ? 255 : maxValue(s.format); }
// Whether the planes in the samples' range are 16-bit (else 8-bit).
PP_HD bool wideSamples(const Settings& s) { return s.format != RawFormat::mono8 && s.sampleShift == 0; }
// The raw plane holds 16-bit words (else bytes).
PP_HD constexpr bool isWide(RawFormat f) {
  return f == RawFormat::mono10 || f == RawFormat::mono12 || f == RawFormat::mono16;
}
// Packed formats: bytes of the plane for `pixels` pixels (a whole number of groups); pixels per group.
PP_HD constexpr bool isPacked(RawFormat f) { return f >= RawFormat::mono10p; }
PP_HD constexpr int packedGroupPixels(RawFormat f) { return f == RawFormat::mono10p ? 4 : 2; }
PP_HD constexpr int packedGroupBytes(RawFormat f) { return f == RawFormat::mono10p ? 5 : 3; }

// Reflect-101 (…2 1 | 0 1 2 … n-2 n-1 | n-2 …): keeps the Bayer phase at the border.
PP_HD int reflect101(int i, int n) {
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

// Malvar-He-Cutler 5x5 kernels, coefficients x16 (the paper's /8 with its halves made whole):
// G at a red or blue site; red/blue at a green site whose row (H) or column (V) holds that
// colour; red at blue and blue at red (D). Indexed [dy + 2][dx + 2].
constexpr int kMhcG[5][5] = {{0, 0, -2, 0, 0}, {0, 0, 4, 0, 0}, {-2, 4, 8, 4, -2}, {0, 0, 4, 0, 0}, {0, 0, -2, 0, 0}};
constexpr int kMhcH[5][5] = {
    {0, 0, 1, 0, 0}, {0, -2, 0, -2, 0}, {-2, 8, 10, 8, -2}, {0, -2, 0, -2, 0}, {0, 0, 1, 0, 0}};
constexpr int kMhcV[5][5] = {
    {0, 0, -2, 0, 0}, {0, -2, 8, -2, 0}, {1, 0, 10, 0, 1}, {0, -2, 8, -2, 0}, {0, 0, -2, 0, 0}};
constexpr int kMhcD[5][5] = {{0, 0, -3, 0, 0}, {0, 4, 0, 4, 0}, {-3, 0, 12, 0, -3}, {0, 4, 0, 4, 0}, {0, 0, -3, 0, 0}};

// Rounds a x16 kernel sum and clamps to the sample range.
PP_HD int mhcResult(int sum16, int maxv) {
  int v = (sum16 + 8) >> 4;
  v = v > 0 ? v : 0;  // a min and a max: the nested select compiled to a compare and a select more
  return v < maxv ? v : maxv;
}

// BT.601 luma weight of channel c, for the luminance Stokes of colour sensors.
PP_HD float lumaWeight(int c) { return c == 0 ? 0.299f : c == 1 ? 0.587f : 0.114f; }

struct Stokes {
  float s0, s1, s2;
};

PP_HD Stokes stokes(float i0, float i45, float i90, float i135) {
  return {(i0 + i45 + i90 + i135) * 0.5f, i0 - i90, i45 - i135};
}

// One channel's four angles summed, S1 = I0 - I90 and S2 = I45 - I135: whole numbers.
struct StokesSums {
  int sum, s1, s2;
};
PP_HD StokesSums stokesSums(int i0, int i45, int i90, int i135) {
  return {i0 + i45 + i90 + i135, i0 - i90, i45 - i135};
}

// The same channel's Stokes in float, as stokes() makes them from its four samples (whole numbers:
// every sum and difference exact).
PP_HD Stokes channelStokes(StokesSums s) {
  return {static_cast<float>(s.sum) * 0.5f, static_cast<float>(s.s1), static_cast<float>(s.s2)};
}

// Adds a channel's Stokes, times its weight, to the luminance's: a fused multiply-add each, so
// that both backends make the same luminance Stokes (the normal's azimuth, for one, turns with
// the sign of S2).
PP_HD void addToLuma(Stokes& luma, Stokes channel, float weight) {
  luma.s0 = fmaRn(weight, channel.s0, luma.s0), luma.s1 = fmaRn(weight, channel.s1, luma.s1),
  luma.s2 = fmaRn(weight, channel.s2, luma.s2);
}

// sqrt(S1^2 + S2^2), the polarized part of the light.
PP_HD float polarizedPart(Stokes s) { return sqrtf(addRn(mulRn(s.s1, s.s1), mulRn(s.s2, s.s2))); }

// sqrt(S1^2 + S2^2) / S0, 0 where S0 is 0, at most 1 (noise can push it above).
PP_HD float dolp(Stokes s) {
  if (s.s0 <= 0.f) return 0.f;
  float d = polarizedPart(s) / s.s0;
  return d > 1.f ? 1.f : d;
}

// 1/2 atan2(S2, S1) in [0, pi).
PP_HD float aolp(Stokes s) {
  float a = 0.5f * atan2f(s.s2, s.s1);
  if (a < 0.f) a += kPi;
  return a >= kPi ? 0.f : a;
}

PP_HD uint8_t unitToByte(float v) {
  v = v < 0.f ? 0.f : v > 1.f ? 1.f : v;
  return static_cast<uint8_t>(v * 255.f + 0.5f);
}

// HSV with hue = AoLP / pi, saturation = DoLP, value = S0 / 2 over the sample range.
PP_HD void aolpVisual(float aolpRad, float dolpValue, float value, uint8_t rgb[3]) {
  float h = aolpRad / kPi * 6.f;
  int sector = static_cast<int>(h);
  float f = h - static_cast<float>(sector);
  float s = dolpValue, v = value < 0.f ? 0.f : value > 1.f ? 1.f : value;
  float p = v * (1.f - s), q = v * (1.f - s * f), t = v * (1.f - s * (1.f - f));
  float r, g, b;
  switch (sector % 6) {
    case 0: r = v, g = t, b = p; break;
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    default: r = v, g = p, b = q; break;
  }
  rgb[0] = unitToByte(r), rgb[1] = unitToByte(g), rgb[2] = unitToByte(b);
}

// A sample from a float in the samples' range: clamped to 0..maxv, rounded to nearest (ties to
// even; on the device one conversion, which takes negatives and NaN to 0, and a minimum).
PP_HD int toSample(float v, int maxv) {
#if defined(__CUDA_ARCH__)
  if (maxv == 255) {  // a saturating conversion to a byte
    unsigned byte;
    asm("cvt.rni.sat.u8.f32 %0, %1;" : "=r"(byte) : "f"(v));
    return static_cast<int>(byte);
  }
  return static_cast<int>(min(__float2uint_rn(v), static_cast<unsigned>(maxv)));
#else
  v = v > 0.f ? v : 0.f;
  v = v < static_cast<float>(maxv) ? v : static_cast<float>(maxv);
  return static_cast<int>(std::nearbyint(v));
#endif
}

// What linear polarizers pass, from one channel's sums, in the samples' range: the least over all
// angles, (S0 - sqrt(S1^2 + S2^2)) / 2 (the polarized part, a reflection, suppressed), the most,
// (S0 + sqrt(S1^2 + S2^2)) / 2, and at angle t, (S0 + S1 cos 2t + S2 sin 2t) / 2; S0 is half the
// sum. In float: the root correctly rounded, S0 / 2 -+ root / 2 and the polarizer's two products
// each one fused multiply-add, then toSample().
struct Passed {
  int least, most, at;
};
PP_HD Passed polarizersPass(StokesSums sums, const Settings& settings, int maxv) {
  float s1 = static_cast<float>(sums.s1), s2 = static_cast<float>(sums.s2);
  float half = static_cast<float>(sums.sum) * 0.25f;  // S0 / 2
  float q = fmaRn(s1, s1, mulRn(s2, s2));
#if defined(__CUDA_ARCH__)
  float root;
  if (maxv <= 255) {
    // 8-bit samples: q is a whole number below 2^17, so exact, and its root, below 361, unless
    // whole, lies at least 1/(4 (2 sqrt(q) + 1)) > 3.4e-4 from every value where the rounded
    // samples change (a root h that is a multiple of 1/2: q - h^2 is then a nonzero multiple of
    // 1/4). The hardware's approximate root is within 3 units in its last place (the CUDA
    // Programming Guide's bound for sqrtf without -prec-sqrt: 1 from compute capability 5.2 on, 3
    // before), at most 9.2e-5 below 512. Rounded to a multiple of 2^-12 (by way of 3072, where a
    // float's last place is 2^-12), a whole root, which can sit exactly on a rounding tie, comes
    // out exact, and any other moves less than 2.2e-4 from the true root, so the samples are the
    // correctly rounded root's. Three instructions against the correctly rounded root's nine and a
    // branch; a GPU test checks every q with every sum.
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(root) : "f"(q));
    root = __fsub_rn(__fadd_rn(root, 3072.f), 3072.f);
  } else {
    root = __fsqrt_rn(q);
  }
#else
  float root = std::sqrt(q);
#endif
  return {toSample(fmaRn(root, -0.5f, half), maxv), toSample(fmaRn(root, 0.5f, half), maxv),
          toSample(fmaRn(s2, 0.5f * settings.polarizerSin, fmaRn(s1, 0.5f * settings.polarizerCos, half)), maxv)};
}

// The surface normal under the diffuse model (light scattered inside the surface, polarized on its
// way out): the zenith angle from the DoLP through the Fresnel transmission of a surface of
// refractive index n, inverted in closed form (the model squared out is a quadratic in cos^2 of the
// zenith; this is its root on the model's branch, tested against the forward model); the azimuth
// is the AoLP, or the AoLP + pi: a diffuse reflection cannot tell which (the normal's x, y could both
// be negated). x to the right, y down the image, z towards the camera. False (a zero vector) where
// the DoLP is below minDolp; at or above the largest diffuse DoLP, (n^2 - 1) / (n^2 + 1), the normal
// lies in the image plane.
PP_HD bool surfaceNormal(Stokes s, float n, float minDolp, float normal[3]) {
  float rho = dolp(s);
  normal[0] = normal[1] = normal[2] = 0.f;
  if (!(rho >= minDolp) || rho <= 0.f) return false;
  float n2 = mulRn(n, n), n4 = mulRn(n2, n2), r2 = mulRn(rho, rho);
  float cos2 = 0.f;  // cos^2 of the zenith
  if (rho < (n2 - 1.f) / (n2 + 1.f)) {
    float root = sqrtf(1.f - r2);
    float num =
        2.f * rho + 2.f * n2 * rho - 2.f * n2 + n4 + r2 + 4.f * n2 * r2 - n4 * r2 - 4.f * n2 * n * rho * root + 1.f;
    float den = n4 * r2 + 2.f * n4 * rho + n4 + 6.f * n2 * r2 + 4.f * n2 * rho - 2.f * n2 + r2 + 2.f * rho + 1.f;
    cos2 = num / den;
    cos2 = cos2 < 0.f ? 0.f : cos2 > 1.f ? 1.f : cos2;
  }
  float sinZenith = sqrtf(1.f - cos2);
  // cos and sin of the AoLP a from cos 2a = S1 / |S1, S2| and sin 2a = S2 / |S1, S2|: a in [0, pi),
  // so sin a >= 0, and cos a has the sign of S2.
  float c2 = s.s1 / polarizedPart(s);
  c2 = c2 < -1.f ? -1.f : c2 > 1.f ? 1.f : c2;
  float cosA = sqrtf((1.f + c2) * 0.5f), sinA = sqrtf((1.f - c2) * 0.5f);
  if (s.s2 < 0.f) cosA = -cosA;
  normal[0] = cosA * sinZenith, normal[1] = sinA * sinZenith, normal[2] = sqrtf(cos2);
  return true;
}

// The usual colouring of a normal: x, y, z from [-1, 1] to red, green, blue.
PP_HD void normalVisual(const float normal[3], bool valid, uint8_t rgb[3]) {
  for (int c = 0; c < 3; ++c) rgb[c] = valid ? unitToByte((normal[c] + 1.f) * 0.5f) : 0;
}

// DoLP, AoLP, the HSV visual and the normal of one pixel from its (luminance) Stokes, where requested.
template <class P>
PP_HD void storePolarization(const P& out, const Settings& settings, int x, int y, Stokes s, float maxValue) {
  if (!out.wantsPolarization()) return;
  float d = dolp(s), a = aolp(s);
  if (out.dolp.data) out.dolp.at(x, y) = d;
  if (out.aolp.data) out.aolp.at(x, y) = a;
  if (out.aolpVisual.data) {
    uint8_t rgb[3];
    aolpVisual(a, d, s.s0 * 0.5f / maxValue, rgb);
    for (int c = 0; c < 3; ++c) out.aolpVisual.at(x, y, c) = rgb[c];
  }
  if (out.wantsNormals()) {
    float normal[3];
    bool valid = surfaceNormal(s, settings.refractiveIndex, settings.minDolp, normal);
    uint8_t rgb[3];
    normalVisual(normal, valid, rgb);
    for (int c = 0; c < 3; ++c) {
      if (out.normals.data) out.normals.at(x, y, c) = normal[c];
      if (out.normalsVisual.data) out.normalsVisual.at(x, y, c) = rgb[c];
    }
  }
}

// One raw sample, whatever the packing (see RawFormat).
PP_HD int rawSample(const ImageView<const uint8_t>& raw, RawFormat format, int x, int y) {
  const uint8_t* row = raw.row(y);
  const uint8_t* pair = row + (x >> 1) * 3;  // 2 pixels in 3 bytes
  switch (format) {
    case RawFormat::mono8: return row[x];
    case RawFormat::mono10p: {  // 10 bits from bit 10x: within the two bytes from its first
      int bit = 10 * x;
      const uint8_t* p = row + (bit >> 3);
      return ((p[0] | (p[1] << 8)) >> (bit & 7)) & 0x3FF;
    }
    case RawFormat::mono12p: return (x & 1) ? (pair[1] >> 4) | (pair[2] << 4) : pair[0] | ((pair[1] & 0x0F) << 8);
    case RawFormat::mono10packed:
      return (x & 1) ? (pair[2] << 2) | ((pair[1] >> 4) & 0x3) : (pair[0] << 2) | (pair[1] & 0x3);
    case RawFormat::mono12packed: return (x & 1) ? (pair[2] << 4) | (pair[1] >> 4) : (pair[0] << 4) | (pair[1] & 0x0F);
    default: return reinterpret_cast<const uint16_t*>(row)[x];
  }
}

// The sample the demosaic works on: the raw one, or with sampleShift its top 8 bits (bits above the
// format's width, which a camera should never send, are ignored).
PP_HD int sampleOf(const ImageView<const uint8_t>& raw, const Settings& s, int x, int y) {
  const int v = rawSample(raw, s.format, x, y);
  return s.sampleShift ? (v >> s.sampleShift) & 0xFF : v;
}

}  // namespace pp::polar
