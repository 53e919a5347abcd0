// AVX2 causal attention in the canonical two-pass order (kernels.hpp), on
// the query-block schedule of internal/attention_blocks.hpp: four dots at a
// time (two queries by two keys, or one query by four keys; one 16-lane
// accumulator pair each, tree4 finishes all four), exact max, exp, a 16-lane
// denominator whose lane is the key's absolute position mod 16, then V
// accumulated key by key.
#include <cmath>

#include "engine/kernels/internal/attention_blocks.hpp"
#include "engine/kernels/internal/avx2_math.hpp"

namespace reprox::kernels::internal {
namespace {

using avx2::head_mask8;
using avx2::load8;
using avx2::store8;

// Where tree4() leaves dot t of its four.
constexpr int kTree4Lane[4] = {0, 4, 1, 5};

struct Avx2Ops {
  static constexpr int kScoreQ = 2;
  static constexpr int64_t score_keys(int q) { return 4 / q; }

  // Dot t = r * (4 / Q) + j is q[r] . k_{p0 + j}. Keys past count repeat
  // the last one (their scores land in the row's padding).
  template <int Q>
  static void score(const float* const* q, const float* k, int64_t d, int64_t p0, int64_t count, float scale,
                    float* const* s) {
    constexpr int kKeys = 4 / Q;
    const float* kp[kKeys];
    for (int j = 0; j < kKeys; ++j) kp[j] = k + (p0 + std::min<int64_t>(j, count - 1)) * d;
    __m256 lo[4], hi[4];
    for (int t = 0; t < 4; ++t) lo[t] = hi[t] = _mm256_setzero_ps();
    for (int64_t dd = 0; dd < d; dd += 16) {
      const bool full = dd + 16 <= d;
      const __m256i ml = head_mask8(d - dd), mh = head_mask8(d - dd - 8);
      __m256 ql[Q], qh[Q];
      for (int r = 0; r < Q; ++r) {
        ql[r] = load8(q[r] + dd, ml, full);
        qh[r] = load8(q[r] + dd + 8, mh, full);
      }
      for (int j = 0; j < kKeys; ++j) {
        const __m256 kl = load8(kp[j] + dd, ml, full), kh = load8(kp[j] + dd + 8, mh, full);
        for (int r = 0; r < Q; ++r) {
          lo[r * kKeys + j] = _mm256_fmadd_ps(ql[r], kl, lo[r * kKeys + j]);
          hi[r * kKeys + j] = _mm256_fmadd_ps(qh[r], kh, hi[r * kKeys + j]);
        }
      }
    }
    alignas(32) float out[8];
    _mm256_store_ps(out, _mm256_mul_ps(avx2::tree4(lo, hi), _mm256_set1_ps(scale)));
    for (int r = 0; r < Q; ++r) {
      for (int j = 0; j < kKeys; ++j) s[r][p0 + j] = out[kTree4Lane[r * kKeys + j]];
    }
  }

  // 32 floats of each accumulator row at a time (four registers a query).
  template <int Q>
  static void accumulate(const float* const* e, const float* v, int64_t d, int64_t first, int64_t last,
                         float* const* acc) {
    for (int64_t d0 = 0; d0 < d; d0 += 32) {
      const bool full = d0 + 32 <= d;
      __m256i m[4];
      __m256 a[Q][4];
      for (int j = 0; j < 4; ++j) {
        m[j] = head_mask8(d - d0 - 8 * j);
        for (int r = 0; r < Q; ++r) a[r][j] = load8(acc[r] + d0 + 8 * j, m[j], full);
      }
      for (int64_t p = first; p <= last; ++p) {
        __m256 w[Q];
        for (int r = 0; r < Q; ++r) w[r] = _mm256_broadcast_ss(e[r] + p);
        const float* vp = v + p * d + d0;
        for (int j = 0; j < 4; ++j) {
          const __m256 vv = load8(vp + 8 * j, m[j], full);
          for (int r = 0; r < Q; ++r) a[r][j] = _mm256_fmadd_ps(w[r], vv, a[r][j]);
        }
      }
      for (int j = 0; j < 4; ++j) {
        for (int r = 0; r < Q; ++r) store8(acc[r] + d0 + 8 * j, m[j], full, a[r][j]);
      }
    }
  }

  static float exp_row(float* scores, int64_t keys) {
    const __m256 minus_inf = _mm256_set1_ps(-INFINITY);
    __m256 maxv = minus_inf;
    for (int64_t p0 = 0; p0 < keys; p0 += 8) {  // vmaxps keeps its second operand on NaN: NaN scores are skipped
      const __m256 sv = _mm256_blendv_ps(minus_inf, _mm256_loadu_ps(scores + p0), _mm256_castsi256_ps(head_mask8(keys - p0)));
      maxv = _mm256_max_ps(sv, maxv);
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(maxv), _mm256_extractf128_ps(maxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const __m256 max = _mm256_set1_ps(_mm_cvtss_f32(m4));
    __m256 lanes[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};  // positions mod 16: 0..7, 8..15
    for (int64_t p0 = 0; p0 < keys; p0 += 8) {
      const __m256 keep = _mm256_castsi256_ps(head_mask8(keys - p0));
      const __m256 e = _mm256_and_ps(keep, avx2::exp(_mm256_sub_ps(_mm256_loadu_ps(scores + p0), max)));
      _mm256_storeu_ps(scores + p0, e);
      lanes[(p0 / 8) % 2] = _mm256_add_ps(lanes[(p0 / 8) % 2], e);
    }
    return avx2::tree(lanes[0], lanes[1]);
  }

  static void divide(const float* acc, float den, int64_t d, float* out) {
    const __m256 dv = _mm256_set1_ps(den);
    for (int64_t d0 = 0; d0 < d; d0 += 8) {
      const __m256i m = head_mask8(d - d0);
      const bool full = d0 + 8 <= d;
      store8(out + d0, m, full, _mm256_div_ps(load8(acc + d0, m, full), dv));
    }
  }
};

}  // namespace

void attention_avx2(const AttentionArgs& a, int64_t begin, int64_t end, float* scratch) {
  attention_items<Avx2Ops>(a, begin, end, scratch);
}

}  // namespace reprox::kernels::internal
