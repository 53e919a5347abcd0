#pragma once
// The schedule the vector attention paths share: the canonical two-pass
// order of kernels.hpp, run over blocks of queries of one head.
//
// Up to kAttentionQueryBlock queries over one KV head run together, key
// block by key block, so that a block of keys (and later of values) is read
// from memory once for all of them and then from L1: on a long context the
// cache is far larger than L2, and one query at a time re-read it from L3 or
// DRAM per query. Each query keeps its own score row and its own value
// accumulators (spilled to scratch between key blocks, which is exact), so
// every output element sees the same operation sequence as alone.
//
// Ops, one per ISA (all static, internal linkage in that ISA's file):
//   kScoreQ: how many queries score() takes at once (besides 1).
//   score_keys(Q): keys per score() call for Q queries; divides 16.
//   score<Q>(q, k, d, p0, count, scale, s): s[r][p0 .. p0 + count) =
//     canonical dot(q[r], k_p) * scale for r < Q, count <= score_keys(Q);
//     may write s[r] up to p0 + score_keys(Q) (score rows are padded to 16).
//   accumulate<Q>(e, v, d, first, last, acc): acc[r][0..d) += e[r][p] * v_p
//     for p = first..last in increasing p, one FMA per element, r < Q (1, 2).
//   exp_row(scores, keys): scores[p] = exp(scores[p] - max) for p < keys, in
//     place (padding lanes may be overwritten); returns the denominator, the
//     16 position-mod-16 lanes combined by the canonical tree.
//   divide(acc, den, d, out): out[j] = acc[j] / den for j < d.
// Included only by the vector translation units; internal linkage.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

// Keys per pass over a query block: 32 keys x head_dim 64 x 4 B = 8 KiB of
// keys or values, which stays in L1 while the block's queries use it.
constexpr int64_t kKeyBlock = 32;

// One query of a block: its row, how many keys it sees, where its output goes.
struct QueryRef {
  const float* q;
  int64_t keys;
  float* out;
};

// Scores of the block's nq queries (keys nondecreasing along the block)
// against the keys k they see, into score rows of `row` floats.
template <class Ops>
void score_block(const float* k, int64_t d, const QueryRef* qs, int64_t nq, int64_t row, float* scratch) {
  constexpr int kQ = Ops::kScoreQ;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  for (int64_t kb = 0; kb < qs[nq - 1].keys; kb += kKeyBlock) {
    int64_t j = 0;
    for (; j + kQ <= nq; j += kQ) {  // query j + r sees at least as many keys as j
      const float* q[kQ];
      float* s[kQ];
      for (int r = 0; r < kQ; ++r) {
        q[r] = qs[j + r].q;
        s[r] = scratch + (j + r) * row;
      }
      const int64_t keys = std::min(qs[j + kQ - 1].keys, kb + kKeyBlock), step = Ops::score_keys(kQ);
      for (int64_t p0 = kb; p0 < keys; p0 += step) {
        Ops::template score<kQ>(q, k, d, p0, std::min<int64_t>(step, keys - p0), scale, s);
      }
    }
    for (; j < nq; ++j) {
      float* sj = scratch + j * row;
      const int64_t keys = std::min(qs[j].keys, kb + kKeyBlock), step = Ops::score_keys(1);
      for (int64_t p0 = kb; p0 < keys; p0 += step) {
        Ops::template score<1>(&qs[j].q, k, d, p0, std::min<int64_t>(step, keys - p0), scale, &sj);
      }
    }
  }
}

// Weighted values of the same block: acc rows (d floats each) += e_p * v_p
// over each query's keys, key block by key block.
template <class Ops>
void value_block(const float* v, int64_t d, const QueryRef* qs, int64_t nq, int64_t row, const float* scores,
                 float* acc) {
  for (int64_t kb = 0; kb < qs[nq - 1].keys; kb += kKeyBlock) {
    int64_t j = 0;
    for (; j + 1 < nq; j += 2) {  // keys both queries see, then query j + 1's further ones
      const float* es[2] = {scores + j * row, scores + (j + 1) * row};
      float* accs[2] = {acc + j * d, acc + (j + 1) * d};
      const int64_t last_a = std::min(qs[j].keys, kb + kKeyBlock) - 1;
      const int64_t last_b = std::min(qs[j + 1].keys, kb + kKeyBlock) - 1;
      if (last_a >= kb) Ops::template accumulate<2>(es, v, d, kb, last_a, accs);
      if (last_b > last_a) Ops::template accumulate<1>(es + 1, v, d, std::max(kb, last_a + 1), last_b, accs + 1);
    }
    for (; j < nq; ++j) {
      const float* ej = scores + j * row;
      float* accj = acc + j * d;
      const int64_t last = std::min(qs[j].keys, kb + kKeyBlock) - 1;
      if (last >= kb) Ops::template accumulate<1>(&ej, v, d, kb, last, &accj);
    }
  }
}

// A block of nq <= kAttentionQueryBlock queries over the same keys k and
// values v (one KV head). scratch: nq score rows of row floats (a multiple of
// 16, at least the last query's key count rounded up), then nq accumulator
// rows of d floats.
template <class Ops>
void query_block(const float* k, const float* v, int64_t d, const QueryRef* qs, int64_t nq, int64_t row,
                 float* scratch) {
  float* acc = scratch + nq * row;
  score_block<Ops>(k, d, qs, nq, row, scratch);
  float denom[kAttentionQueryBlock];
  for (int64_t j = 0; j < nq; ++j) {
    denom[j] = Ops::exp_row(scratch + j * row, qs[j].keys);
    std::fill(acc + j * d, acc + (j + 1) * d, 0.0f);
  }
  value_block<Ops>(v, d, qs, nq, row, scratch, acc);
  for (int64_t j = 0; j < nq; ++j) Ops::divide(acc + j * d, denom[j], d, qs[j].out);
}

// (head, query) items [begin, end) (paths.hpp) in blocks that share a KV
// head: consecutive queries of one head, or, for a single query per head
// (a decode step), the query heads of one KV group, which then read the
// group's keys and values once instead of once per head.
template <class Ops>
void attention_items(const AttentionArgs& a, int64_t begin, int64_t end, float* scratch) {
  const int64_t d = a.head_dim, group = a.n_heads / a.n_kv_heads;
  const int64_t row = (a.q_offset + a.t + 15) / 16 * 16;
  QueryRef qs[kAttentionQueryBlock];
  for (int64_t item = begin; item < end;) {
    const int64_t h = item / a.t, i = item % a.t;
    const int64_t nq = a.t == 1 ? std::min({kAttentionQueryBlock, group - h % group, end - item})
                                : std::min({kAttentionQueryBlock, a.t - i, end - item});
    for (int64_t j = 0; j < nq; ++j) {
      const int64_t hj = a.t == 1 ? h + j : h, ij = a.t == 1 ? i : i + j;
      qs[j] = {a.q + hj * a.q_head_stride + ij * a.q_token_stride, a.q_offset + ij + 1,
               a.out + ij * (a.n_heads * d) + hj * d};
    }
    const int64_t kv = (h / group) * a.kv_head_stride;
    query_block<Ops>(a.k + kv, a.v + kv, d, qs, nq, row, scratch);
    item += nq;
  }
}

}  // namespace
}  // namespace reprox::kernels::internal
