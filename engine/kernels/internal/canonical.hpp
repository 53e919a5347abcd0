#pragma once
// The canonical operation sequences every ISA path must reproduce bit for
// bit. This header is the scalar reference and the scalar fallback; it is
// included only by the portable translation units (never by the AVX ones),
// and everything here has internal linkage so no vector-compiled copy can be
// merged into the scalar path at link time.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace reprox::kernels::canonical {
namespace {

constexpr int kLanes = 16;

// Combine 16 lane partials: (l, l+8) -> (l, l+4) -> (l, l+2) -> (0, 1).
inline float tree16(const float* lanes) {
  float a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i) a[i] = lanes[i] + lanes[i + 8];
  for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
  for (int i = 0; i < 2; ++i) c[i] = b[i] + b[i + 2];
  return c[0] + c[1];
}

// Lane l accumulates a[k]*b[k] (fused) for k = l, l+16, ... in increasing k.
inline float dot(const float* a, const float* b, int64_t n) {
  float lanes[kLanes] = {};
  for (int64_t k = 0; k < n; ++k) lanes[k % kLanes] = std::fma(a[k], b[k], lanes[k % kLanes]);
  return tree16(lanes);
}

// ---- weight widening (kernels.hpp, "weight storage") ----
// A linear with f16, bf16 or q8 weights is dot(x, w') with w' = widen_row(w):
// the canonical dot above, unchanged, over the widened values. For q8 that
// is, per output element, lane l accumulating fma(x[k], float(q[k]) *
// scale[k / 32], lane) for k = l, l+16, ... (the product q * scale rounded
// to fp32 first, never fused), then tree16: bitwise the fp32 dot over the
// dequantized matrix.
// bf16 -> fp32: the bits shifted left by 16 (exact, NaNs included).
inline float widen_bf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE half -> fp32, exact; subnormals are normalized, a NaN keeps its
// payload and gets the quiet bit (what vcvtph2ps does).
inline float widen_f16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13) | (mant != 0 ? 0x00400000u : 0u);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: value mant * 2^-24, renormalized
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Q8: the scale of block b of a q8 row, and the dequantized weight j.
inline float q8_scale(const uint8_t* row, int64_t b) {
  float s;
  std::memcpy(&s, row + 4 * b, sizeof s);
  return s;
}
inline float q8_weight(const uint8_t* row, int64_t k, int64_t j) {
  int8_t q;
  std::memcpy(&q, row + 4 * ((k + 31) / 32) + j, 1);
  return static_cast<float>(q) * q8_scale(row, j / 32);
}

// Row `row` (type 0 f32, 1 f16, 2 bf16, 3 q8, as kernels::WeightType) of k
// weights as fp32 values w' into out[0..k).
inline void widen_row(int type, const uint8_t* row, int64_t k, float* out) {
  for (int64_t j = 0; j < k; ++j) {
    uint16_t h = 0;
    if (type == 1 || type == 2) std::memcpy(&h, row + 2 * j, sizeof h);
    switch (type) {
      case 1: out[j] = widen_f16(h); break;
      case 2: out[j] = widen_bf16(h); break;
      case 3: out[j] = q8_weight(row, k, j); break;
      default: std::memcpy(out + j, row + 4 * j, sizeof(float));
    }
  }
}

// Same lane split with plain adds.
inline float sum(const float* a, int64_t n) {
  float lanes[kLanes] = {};
  for (int64_t k = 0; k < n; ++k) lanes[k % kLanes] += a[k];
  return tree16(lanes);
}

// exp(x): clamp to [-104, 89], n = round(x / ln2) via the 1.5*2^23 trick,
// r = x - n*ln2 in two parts, degree-7 Taylor polynomial in Horner form with
// FMA, then scale by 2^(n>>1) and 2^(n - (n>>1)) so under- and overflow round
// correctly. NaN passes through. Max error about 2 ulp on normal results.
constexpr float kExpLo = -104.0f;
constexpr float kExpHi = 89.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRoundMagic = 12582912.0f;
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682030941723212e-6f;
constexpr float kExpC[8] = {1.0f, 1.0f, 0.5f, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};

inline float pow2i(int32_t e) {
  const int32_t bits = (e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float exp(float x) {
  float xc = (x > kExpLo) ? x : kExpLo;  // NaN -> kExpLo, like vmaxps(x, lo)
  xc = (xc < kExpHi) ? xc : kExpHi;
  const float n = std::fma(xc, kLog2e, kRoundMagic) - kRoundMagic;
  float r = std::fma(n, -kLn2Hi, xc);
  r = std::fma(n, -kLn2Lo, r);
  float p = kExpC[7];
  for (int i = 6; i >= 0; --i) p = std::fma(p, r, kExpC[i]);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1;
  const float y = (p * pow2i(n1)) * pow2i(ni - n1);
  return (x != x) ? x : y;
}

inline float silu_mul(float g, float u) { return g / (1.0f + exp(-g)) * u; }

constexpr float kGeluK0 = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluK1 = 0.044715f;

// x / (1 + exp(-2u)), u = k0 * (x + k1 * x^3); each product rounded, no FMA.
inline float gelu_tanh(float x) {
  const float x3 = (x * x) * x;
  const float u = kGeluK0 * (x + kGeluK1 * x3);
  return x / (1.0f + exp(-2.0f * u));
}

}  // namespace
}  // namespace reprox::kernels::canonical
