#pragma once
// AVX2 versions of the canonical sequences in canonical.hpp. A 16-lane
// partial sum is a pair of ymm registers: lanes 0..7 and 8..15. Included only
// by translation units compiled with -mavx2 -mfma; internal linkage
// throughout.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace reprox::kernels::avx2 {
namespace {

// Lane mask for the first `count` of 8 lanes (any count; clamped to 0..8),
// for _mm256_maskload_ps / _mm256_maskstore_ps (masked-off lanes read as +0
// and never touch memory).
inline __m256i head_mask8(int64_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(count, 0, 8))), lane);
}

// Eight floats at p, or only the lanes of m where !full (masked-off lanes
// read as +0 and are never written). Full vectors use plain loads and stores:
// a masked store is microcoded and slow on AMD.
inline __m256 load8(const float* p, __m256i m, bool full) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}
inline void store8(float* p, __m256i m, bool full, __m256 v) {
  if (full) _mm256_storeu_ps(p, v);
  else _mm256_maskstore_ps(p, m, v);
}

// The canonical tree of one 16-lane sum held as (lanes 0..7, lanes 8..15):
// (l, l+8) -> (l, l+4) -> (l, l+2) -> (0, 1).
inline float tree(__m256 lo, __m256 hi) {
  const __m256 a = _mm256_add_ps(lo, hi);
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

// The canonical tree of four 16-lane sums at once: returns lanes
// {tree(0), tree(2), tree(0), tree(2) | tree(1), tree(3), tree(1), tree(3)},
// each the same additions of the same pairs as tree().
inline __m256 tree4(const __m256* lo, const __m256* hi) {
  __m256 s[4];
  for (int i = 0; i < 4; ++i) s[i] = _mm256_add_ps(lo[i], hi[i]);  // (l, l+8)
  // (l, l+4): [s0.low128 | s1.low128] + [s0.high128 | s1.high128]
  const __m256 t0 = _mm256_add_ps(_mm256_permute2f128_ps(s[0], s[1], 0x20), _mm256_permute2f128_ps(s[0], s[1], 0x31));
  const __m256 t1 = _mm256_add_ps(_mm256_permute2f128_ps(s[2], s[3], 0x20), _mm256_permute2f128_ps(s[2], s[3], 0x31));
  // (l, l+2): per 128-bit half, {t0[0] + t0[2], t0[1] + t0[3], t1[0] + t1[2], t1[1] + t1[3]}
  const __m256 u = _mm256_add_ps(_mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2)));
  // (0, 1): per half, {u[0] + u[1], u[2] + u[3]} twice
  return _mm256_add_ps(_mm256_shuffle_ps(u, u, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(u, u, _MM_SHUFFLE(3, 1, 3, 1)));
}

// Canonical dot product of a[0..n) and b[0..n).
inline float dot(const float* a, const float* b, int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    lo = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), lo);
    hi = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + 8), _mm256_loadu_ps(b + k + 8), hi);
  }
  if (k < n) {
    const __m256i ml = head_mask8(n - k), mh = head_mask8(n - k - 8);
    lo = _mm256_fmadd_ps(_mm256_maskload_ps(a + k, ml), _mm256_maskload_ps(b + k, ml), lo);
    hi = _mm256_fmadd_ps(_mm256_maskload_ps(a + k + 8, mh), _mm256_maskload_ps(b + k + 8, mh), hi);
  }
  return tree(lo, hi);
}

// Canonical sum of a[0..n) (the dot's lanes with plain adds).
inline float sum(const float* a, int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    lo = _mm256_add_ps(lo, _mm256_loadu_ps(a + k));
    hi = _mm256_add_ps(hi, _mm256_loadu_ps(a + k + 8));
  }
  if (k < n) {
    lo = _mm256_add_ps(lo, _mm256_maskload_ps(a + k, head_mask8(n - k)));
    hi = _mm256_add_ps(hi, _mm256_maskload_ps(a + k + 8, head_mask8(n - k - 8)));
  }
  return tree(lo, hi);
}

// canonical::exp, eight lanes at a time.
inline __m256 exp(__m256 x) {
  // vmaxps returns its second operand when either is NaN: NaN -> -104, as the scalar clamp.
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(89.0f));
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 n = _mm256_sub_ps(_mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic), magic);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), xc);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.42860682030941723212e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

}  // namespace
}  // namespace reprox::kernels::avx2
