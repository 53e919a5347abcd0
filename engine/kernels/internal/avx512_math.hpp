#pragma once
// AVX-512 versions of the canonical sequences in canonical.hpp. Included only
// by translation units compiled with -mavx512f/-mavx512dq/-mavx512bw/-mavx512vl/-mfma;
// internal linkage throughout.
#include <immintrin.h>

#include <cstdint>

namespace reprox::kernels::avx512 {
namespace {

// Lane mask for the first `count` of 16 lanes (count in 0..16).
inline __mmask16 head_mask(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1u);
}

// Where the result for output lane L must be accumulated so that reduce16()
// leaves it in lane L (reduce16's transpose puts accumulator 4e+q in lane 4q+e).
constexpr int acc_slot(int lane) { return 4 * (lane % 4) + lane / 4; }

// acc[a] holds 16 lane partials; returns a vector whose lane 4q+e is
// tree16(acc[4e+q]), the tree being (l, l+8) -> (l, l+4) -> (l, l+2) -> (0, 1).
inline __m512 reduce16(const __m512* acc) {
  __m512 s[8], t[4], u[2];
  for (int i = 0; i < 8; ++i) {  // level 1: halves of 256 bits
    const __m512 lo = _mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 hi = _mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2));
    s[i] = _mm512_add_ps(lo, hi);  // [a1(2i) 0..7 | a1(2i+1) 0..7]
  }
  for (int i = 0; i < 4; ++i) {  // level 2: 128-bit blocks
    const __m512 lo = _mm512_shuffle_f32x4(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 hi = _mm512_shuffle_f32x4(s[2 * i], s[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1));
    t[i] = _mm512_add_ps(lo, hi);  // block q: a2(4i+q) 0..3
  }
  for (int i = 0; i < 2; ++i) {  // level 3: pairs inside blocks
    const __m512 lo = _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 hi = _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2));
    u[i] = _mm512_add_ps(lo, hi);  // block q: a3(8i+q) 0..1, a3(8i+4+q) 0..1
  }
  const __m512 lo = _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0));
  const __m512 hi = _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1));
  return _mm512_add_ps(lo, hi);  // block q, element e: tree(acc[4e+q])
}

// Lane-wise tree16 of a single vector (the canonical combine of one dot's lanes).
inline float reduce_one(__m512 v) {
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  const __m128 d = _mm_add_ss(c, _mm_movehdup_ps(c));
  return _mm_cvtss_f32(d);
}

// Canonical dot product of a[0..n) and b[0..n).
inline float dot(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc);
  if (k < n) {
    const __mmask16 m = head_mask(n - k);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k), acc);
  }
  return reduce_one(acc);
}

inline float sum(const float* a, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + k));
  if (k < n) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(head_mask(n - k), a + k));
  return reduce_one(acc);
}

inline __m512 exp(__m512 x) {
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693145751953125f), xc);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.42860682030941723212e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i ni = _mm512_cvtps_epi32(n);
  const __m512i n1 = _mm512_srai_epi32(ni, 1);
  const __m512i n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(nan, y, x);
}

}  // namespace
}  // namespace reprox::kernels::avx512
