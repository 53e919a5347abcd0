// AVX-512 causal attention in the canonical two-pass order (kernels.hpp):
// scores for 16 keys at a time (one accumulator per key, reduce16 finishes
// all 16 dots at once), exact max, exp, a 16-lane denominator whose lane is
// the key's absolute position mod 16, then V accumulated key by key.
//
// Up to kAttentionQueryBlock consecutive queries of one head run together,
// key block by key block, so that a block of keys (and later of values) is
// read from memory once for all of them and then from L1: on a long context
// the cache is far larger than L2, and one query at a time re-read it from
// L3 or DRAM per query. Each query keeps its own score row and its own
// value accumulators (spilled to scratch between key blocks, which is exact),
// so every output element sees the same operation sequence as alone.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kernels/internal/avx512_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx512::acc_slot;
using avx512::head_mask;

// Keys per pass over a query block: 32 keys x head_dim 64 x 4 B = 8 KiB of
// keys or values, which stays in L1 while the block's queries use it.
constexpr int64_t kKeyBlock = 32;
// Queries whose scores share each key row loaded (score_multi).
constexpr int kQ = 2;

// s[r][p0 .. p0 + 16/Q) = dot(q[r], k_p) * scale for Q queries (1, 2 or 4)
// and keys p0..p0+count-1, 16 / Q keys at a time: lanes [r * 16/Q,
// (r + 1) * 16/Q) belong to query r (one accumulator per query and key;
// reduce16 finishes all 16 dots at once), and each key row loaded serves
// all Q. Lanes past count hold garbage from repeating the last key.
template <int Q>
inline void score_multi(const float* const* q, const float* k, int64_t d, int64_t p0, int64_t count, __m512 scale,
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
      for (int r = 0; r < Q; ++r) acc[acc_slot(r * kKeys + j)] = _mm512_fmadd_ps(qv[r], kv, acc[acc_slot(r * kKeys + j)]);
    }
  }
  alignas(64) float out[16];
  _mm512_store_ps(out, _mm512_mul_ps(avx512::reduce16(acc), scale));
  for (int r = 0; r < Q; ++r) std::memcpy(s[r] + p0, out + r * kKeys, sizeof(float) * kKeys);
}

// For each query r < Q: acc[r][0..d) += e[r][p] * v_p for p = first..last
// in increasing p (FMA); each value row loaded serves all Q queries.
template <int Q>
inline void accumulate_values(const float* const* e, const float* v, int64_t d, int64_t first, int64_t last,
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
inline float exp_row(float* scores, int64_t keys) {
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

// Queries i0 .. i0+nq-1 of head h. scratch: nq score rows of row floats
// (a multiple of 16, at least the last query's key count rounded up), then
// nq accumulator rows of head_dim floats.
void query_block(const AttentionArgs& a, int64_t h, int64_t i0, int64_t nq, int64_t row, float* scratch) {
  const int64_t d = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const __m512 scale = _mm512_set1_ps(static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  const float* k = a.k + (h / group) * a.kv_head_stride;
  const float* v = a.v + (h / group) * a.kv_head_stride;
  float* acc = scratch + nq * row;
  const auto keys_of = [&](int64_t j) { return a.q_offset + i0 + j + 1; };
  const auto q_of = [&](int64_t j) { return a.q + h * a.q_head_stride + (i0 + j) * a.q_token_stride; };
  const int64_t all_keys = keys_of(nq - 1);
  for (int64_t kb = 0; kb < all_keys; kb += kKeyBlock) {
    int64_t j = 0;
    for (; j + kQ <= nq; j += kQ) {  // query j + r sees r keys more than j
      const float* qs[kQ];
      float* ss[kQ];
      for (int r = 0; r < kQ; ++r) {
        qs[r] = q_of(j + r);
        ss[r] = scratch + (j + r) * row;
      }
      const int64_t keys = std::min(keys_of(j + kQ - 1), kb + kKeyBlock);
      for (int64_t p0 = kb; p0 < keys; p0 += 16 / kQ) {
        score_multi<kQ>(qs, k, d, p0, std::min<int64_t>(16 / kQ, keys - p0), scale, ss);
      }
    }
    for (; j < nq; ++j) {
      const float* qj = q_of(j);
      float* sj = scratch + j * row;
      const int64_t keys = std::min(keys_of(j), kb + kKeyBlock);
      for (int64_t p0 = kb; p0 < keys; p0 += 16) {
        score_multi<1>(&qj, k, d, p0, std::min<int64_t>(16, keys - p0), scale, &sj);
      }
    }
  }
  float denom[kAttentionQueryBlock];
  for (int64_t j = 0; j < nq; ++j) {
    denom[j] = exp_row(scratch + j * row, keys_of(j));
    std::fill(acc + j * d, acc + (j + 1) * d, 0.0f);
  }
  for (int64_t kb = 0; kb < all_keys; kb += kKeyBlock) {
    int64_t j = 0;
    for (; j + 1 < nq; j += 2) {  // keys both queries see, then query j + 1's one more
      const float* es[2] = {scratch + j * row, scratch + (j + 1) * row};
      float* accs[2] = {acc + j * d, acc + (j + 1) * d};
      const int64_t last_a = std::min(keys_of(j), kb + kKeyBlock) - 1;
      const int64_t last_b = std::min(keys_of(j + 1), kb + kKeyBlock) - 1;
      if (last_a >= kb) accumulate_values<2>(es, v, d, kb, last_a, accs);
      if (last_b > last_a) accumulate_values<1>(es + 1, v, d, std::max(kb, last_a + 1), last_b, accs + 1);
    }
    for (; j < nq; ++j) {
      const float* ej = scratch + j * row;
      float* accj = acc + j * d;
      const int64_t last = std::min(keys_of(j), kb + kKeyBlock) - 1;
      if (last >= kb) accumulate_values<1>(&ej, v, d, kb, last, &accj);
    }
  }
  for (int64_t j = 0; j < nq; ++j) {
    float* out = a.out + (i0 + j) * (a.n_heads * d) + h * d;
    const __m512 den = _mm512_set1_ps(denom[j]);
    for (int64_t d0 = 0; d0 < d; d0 += 16) {
      const __mmask16 m = head_mask(d - d0);
      _mm512_mask_storeu_ps(out + d0, m, _mm512_div_ps(_mm512_maskz_loadu_ps(m, acc + j * d + d0), den));
    }
  }
}

}  // namespace

void attention_avx512(const AttentionArgs& a, int64_t begin, int64_t end, float* scratch) {
  const int64_t row = (a.q_offset + a.t + 15) / 16 * 16;
  for (int64_t item = begin; item < end;) {
    const int64_t h = item / a.t, i = item % a.t;
    const int64_t nq = std::min({kAttentionQueryBlock, a.t - i, end - item});
    query_block(a, h, i, nq, row, scratch);
    item += nq;
  }
}

}  // namespace reprox::kernels::internal
