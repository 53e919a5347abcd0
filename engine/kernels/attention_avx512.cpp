// AVX-512 causal attention in the canonical two-pass order (kernels.hpp),
// on the query-block schedule of internal/attention_blocks.hpp: scores for
// 16 keys at a time (one accumulator per key, reduce16 finishes all 16 dots
// at once), exact max, exp, a 16-lane denominator whose lane is the key's
// absolute position mod 16, then V accumulated key by key.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kernels/internal/attention_blocks.hpp"
#include "engine/kernels/internal/avx512_math.hpp"

namespace reprox::kernels::internal {
namespace {

using avx512::acc_slot;
using avx512::head_mask;

struct Avx512Ops {
  static constexpr int kScoreQ = 2;  // queries whose scores share each key row loaded
  static constexpr int64_t score_keys(int q) { return 16 / q; }

  // s[r][p0 .. p0 + 16/Q) = dot(q[r], k_p) * scale for Q queries (1, 2 or 4)
  // and keys p0..p0+count-1, 16 / Q keys at a time: lanes [r * 16/Q,
  // (r + 1) * 16/Q) belong to query r (one accumulator per query and key;
  // reduce16 finishes all 16 dots at once), and each key row loaded serves
  // all Q. Lanes past count hold garbage from repeating the last key.
  template <int Q>
  static void score(const float* const* q, const float* k, int64_t d, int64_t p0, int64_t count, float scale,
                    float* const* s) {
    constexpr int kKeys = 16 / Q;
    const float* kp[kKeys];
    for (int j = 0; j < kKeys; ++j) kp[j] = k + (p0 + std::min<int64_t>(j, count - 1)) * d;
    __m512 acc[16];
    for (int j = 0; j < 16; ++j) acc[j] = _mm512_setzero_ps();
    for (int64_t dd = 0; dd < d; dd += 16) {
      const __mmask16 m = head_mask(d - dd);
      __m512 qv[Q];
      for (int r = 0; r < Q; ++r) qv[r] = _mm512_maskz_loadu_ps(m, q[r] + dd);
      for (int j = 0; j < kKeys; ++j) {
        const __m512 kv = _mm512_maskz_loadu_ps(m, kp[j] + dd);
        for (int r = 0; r < Q; ++r) {
          acc[acc_slot(r * kKeys + j)] = _mm512_fmadd_ps(qv[r], kv, acc[acc_slot(r * kKeys + j)]);
        }
      }
    }
    alignas(64) float out[16];
    _mm512_store_ps(out, _mm512_mul_ps(avx512::reduce16(acc), _mm512_set1_ps(scale)));
    for (int r = 0; r < Q; ++r) std::memcpy(s[r] + p0, out + r * kKeys, sizeof(float) * kKeys);
  }

  // For each query r < Q: acc[r][0..d) += e[r][p] * v_p for p = first..last
  // in increasing p (FMA); each value row loaded serves all Q queries.
  template <int Q>
  static void accumulate(const float* const* e, const float* v, int64_t d, int64_t first, int64_t last,
                         float* const* acc) {
    for (int64_t d0 = 0; d0 < d; d0 += 64) {
      __mmask16 m[4];
      __m512 a[Q][4];
      for (int j = 0; j < 4; ++j) {
        m[j] = head_mask(std::max<int64_t>(0, d - d0 - 16 * j));
        for (int r = 0; r < Q; ++r) a[r][j] = _mm512_maskz_loadu_ps(m[j], acc[r] + d0 + 16 * j);
      }
      for (int64_t p = first; p <= last; ++p) {
        __m512 w[Q];
        for (int r = 0; r < Q; ++r) w[r] = _mm512_set1_ps(e[r][p]);
        const float* vp = v + p * d + d0;
        for (int j = 0; j < 4; ++j) {
          const __m512 vv = _mm512_maskz_loadu_ps(m[j], vp + 16 * j);
          for (int r = 0; r < Q; ++r) a[r][j] = _mm512_fmadd_ps(w[r], vv, a[r][j]);
        }
      }
      for (int j = 0; j < 4; ++j) {
        for (int r = 0; r < Q; ++r) _mm512_mask_storeu_ps(acc[r] + d0 + 16 * j, m[j], a[r][j]);
      }
    }
  }

  // Turns a score row [0, keys) into exp(score - max) in place; returns the
  // denominator (16 position-mod-16 lanes, then the canonical tree).
  static float exp_row(float* scores, int64_t keys) {
    __m512 maxv = _mm512_set1_ps(-INFINITY);
    for (int64_t p0 = 0; p0 < keys; p0 += 16) {
      maxv = _mm512_mask_max_ps(maxv, head_mask(keys - p0), maxv, _mm512_loadu_ps(scores + p0));
    }
    const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(maxv));
    __m512 lanes = _mm512_setzero_ps();
    for (int64_t p0 = 0; p0 < keys; p0 += 16) {
      const __mmask16 m = head_mask(keys - p0);
      const __m512 e = _mm512_maskz_mov_ps(m, avx512::exp(_mm512_sub_ps(_mm512_loadu_ps(scores + p0), max)));
      _mm512_storeu_ps(scores + p0, e);
      lanes = _mm512_add_ps(lanes, e);
    }
    return avx512::reduce_one(lanes);
  }

  static void divide(const float* acc, float den, int64_t d, float* out) {
    const __m512 dv = _mm512_set1_ps(den);
    for (int64_t d0 = 0; d0 < d; d0 += 16) {
      const __mmask16 m = head_mask(d - d0);
      _mm512_mask_storeu_ps(out + d0, m, _mm512_div_ps(_mm512_maskz_loadu_ps(m, acc + d0), dv));
    }
  }
};

}  // namespace

void attention_avx512(const AttentionArgs& a, int64_t begin, int64_t end, float* scratch) {
  attention_items<Avx512Ops>(a, begin, end, scratch);
}

}  // namespace reprox::kernels::internal
