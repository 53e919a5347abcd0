// AVX-512 causal attention in the canonical two-pass order (kernels.hpp):
// scores for 16 keys at a time (one accumulator per key, reduce16 finishes
// all 16 dots at once), exact max, exp, a 16-lane denominator whose lane is
// the key's absolute position mod 16, then V accumulated key by key.
#include <algorithm>
#include <cmath>

#include "engine/kernels/internal/avx512_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx512::acc_slot;
using avx512::head_mask;

// scores[p0 .. p0+16) = dot(q, k_p) * scale for keys p0..p0+count-1; lanes
// past count hold garbage from repeating the last key.
inline void score_block(const float* q, const float* k, int64_t d, int64_t p0, int64_t count, __m512 scale,
                        float* scores) {
  const float* kp[16];
  for (int j = 0; j < 16; ++j) kp[j] = k + (p0 + std::min<int64_t>(j, count - 1)) * d;
  __m512 acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t dd = 0; dd < d; dd += 16) {
    const __mmask16 m = head_mask(d - dd);
    const __m512 qv = _mm512_maskz_loadu_ps(m, q + dd);
    for (int j = 0; j < 16; ++j) {
      acc[acc_slot(j)] = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, kp[j] + dd), acc[acc_slot(j)]);
    }
  }
  _mm512_storeu_ps(scores + p0, _mm512_mul_ps(avx512::reduce16(acc), scale));
}

// out[0..d) = (sum_p e_p * v_p) / denom, p = 0..last, FMA in increasing p.
inline void weighted_values(const float* e, const float* v, int64_t d, int64_t last, float denom, float* out) {
  const __m512 den = _mm512_set1_ps(denom);
  for (int64_t d0 = 0; d0 < d; d0 += 64) {
    __mmask16 m[4];
    __m512 acc[4];
    for (int j = 0; j < 4; ++j) {
      m[j] = head_mask(std::max<int64_t>(0, d - d0 - 16 * j));
      acc[j] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p <= last; ++p) {
      const __m512 w = _mm512_set1_ps(e[p]);
      const float* vp = v + p * d + d0;
      for (int j = 0; j < 4; ++j) acc[j] = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(m[j], vp + 16 * j), acc[j]);
    }
    for (int j = 0; j < 4; ++j) _mm512_mask_storeu_ps(out + d0 + 16 * j, m[j], _mm512_div_ps(acc[j], den));
  }
}

}  // namespace

void attention_avx512(const AttentionArgs& a, int64_t begin, int64_t end, float* scores) {
  const int64_t d = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const __m512 scale = _mm512_set1_ps(static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  for (int64_t item = begin; item < end; ++item) {
    const int64_t h = item / a.t, i = item % a.t;
    const int64_t keys = a.q_offset + i + 1;
    const float* q = a.q + h * a.q_head_stride + i * a.q_token_stride;
    const float* k = a.k + (h / group) * a.kv_head_stride;
    const float* v = a.v + (h / group) * a.kv_head_stride;
    __m512 maxv = _mm512_set1_ps(-INFINITY);
    for (int64_t p0 = 0; p0 < keys; p0 += 16) {
      const int64_t count = std::min<int64_t>(16, keys - p0);
      score_block(q, k, d, p0, count, scale, scores);
      maxv = _mm512_mask_max_ps(maxv, head_mask(count), maxv, _mm512_loadu_ps(scores + p0));
    }
    const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(maxv));
    __m512 lanes = _mm512_setzero_ps();
    for (int64_t p0 = 0; p0 < keys; p0 += 16) {
      const __mmask16 m = head_mask(keys - p0);
      const __m512 e = _mm512_maskz_mov_ps(m, avx512::exp(_mm512_sub_ps(_mm512_loadu_ps(scores + p0), max)));
      _mm512_storeu_ps(scores + p0, e);
      lanes = _mm512_add_ps(lanes, e);
    }
    weighted_values(scores, v, d, keys - 1, avx512::reduce_one(lanes), a.out + i * (a.n_heads * d) + h * d);
  }
}

}  // namespace reprox::kernels::internal
