// AVX2 GEMM in the canonical order: a 16-lane partial sum is a pair of ymm
// registers (lanes 0..7 and 8..15); one row times four columns per pass,
// each dot finished with the canonical tree.
#include <immintrin.h>

#include <algorithm>

#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

inline __m256i head_mask8(int64_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(count, 0, 8))), lane);
}

inline float tree(__m256 lo, __m256 hi) {
  const __m256 a = _mm256_add_ps(lo, hi);
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

constexpr int kCols = 4;

inline void tile(const float* x, const float* const* wc, int64_t k, float* out) {
  __m256 lo[kCols], hi[kCols];
  for (int c = 0; c < kCols; ++c) lo[c] = hi[c] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    const __m256 xl = _mm256_loadu_ps(x + kk), xh = _mm256_loadu_ps(x + kk + 8);
    for (int c = 0; c < kCols; ++c) {
      lo[c] = _mm256_fmadd_ps(xl, _mm256_loadu_ps(wc[c] + kk), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, _mm256_loadu_ps(wc[c] + kk + 8), hi[c]);
    }
  }
  if (kk < k) {
    const __m256i ml = head_mask8(k - kk), mh = head_mask8(k - kk - 8);
    const __m256 xl = _mm256_maskload_ps(x + kk, ml), xh = _mm256_maskload_ps(x + kk + 8, mh);
    for (int c = 0; c < kCols; ++c) {
      lo[c] = _mm256_fmadd_ps(xl, _mm256_maskload_ps(wc[c] + kk, ml), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, _mm256_maskload_ps(wc[c] + kk + 8, mh), hi[c]);
    }
  }
  for (int c = 0; c < kCols; ++c) out[c] = tree(lo[c], hi[c]);
}

}  // namespace

void gemm_avx2(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  for (int64_t r = 0; r < a.m; ++r) {
    const float* x = a.x + r * a.x_stride;
    float* y = a.y + r * a.y_stride;
    for (int64_t c0 = n_begin; c0 < n_end; c0 += kCols) {
      const int64_t cols = std::min<int64_t>(kCols, n_end - c0);
      const float* wc[kCols];
      for (int c = 0; c < kCols; ++c) wc[c] = a.w + (c0 + std::min<int64_t>(c, cols - 1)) * a.k;
      float out[kCols];
      tile(x, wc, a.k, out);
      for (int64_t c = 0; c < cols; ++c) y[c0 + c] = a.bias != nullptr ? out[c] + a.bias[c0 + c] : out[c];
    }
  }
}

}  // namespace reprox::kernels::internal
