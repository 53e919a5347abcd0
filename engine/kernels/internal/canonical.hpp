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
