// The libtorch ("fast") forward pass over the rows of one or more sequences:
// the norms, projections, RoPE and the MLP run once over all rows (ops.hpp
// on [R, ...]); the cache writes and attention run for a DecodeGroup's rows
// at once and per segment for the others. Few, large operations: on a GPU
// each one is a kernel launch.
#include <cmath>
#include <limits>

#include <torch/types.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/model/ops.hpp"

namespace reprox::engine::blocks {
namespace {

// The decode rows of a DecodeGroup: every row's key and value into its
// slot (one index_put_ each), the slots' first L positions gathered, and
// attention over them with the positions after each row's masked out.
// q [B, Nq, D] (scaled); k, v [B, Nkv, D]. Returns [B, Nq * D].
torch::Tensor attend_group(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const DecodeGroup& g, size_t layer) {
  using torch::indexing::Slice;
  const int64_t b = q.size(0), nq = q.size(1), d = q.size(2), nkv = k.size(1);
  torch::Tensor k_slots = g.arena->k(layer);  // [S, Nkv, tokens, D]
  torch::Tensor v_slots = g.arena->v(layer);
  k_slots.index_put_({g.slots, Slice(), g.pos}, k);
  v_slots.index_put_({g.slots, Slice(), g.pos}, v);
  const torch::Tensor keys = k_slots.narrow(2, 0, g.len).index_select(0, g.slots);    // [B, Nkv, L, D]
  const torch::Tensor values = v_slots.narrow(2, 0, g.len).index_select(0, g.slots);  // [B, Nkv, L, D]
  const torch::Tensor scores = torch::matmul(q.reshape({b, nkv, nq / nkv, d}), keys.transpose(2, 3))
                                   .masked_fill(g.future, -std::numeric_limits<float>::infinity());  // [B, Nkv, G, L]
  const torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(values.scalar_type());
  return torch::matmul(probs, values).reshape({b, nq * d});  // [B, Nkv, G, D] -> [B, Nq * D]
}

// The group's rows (the first B, when there is a DecodeGroup) with
// attend_group; then per segment: its keys/values into its cache, causal
// attention over its cache prefix. q [R, Nq, D] (scaled); k, v [R, Nkv, D].
// Returns [R, Nq * D], rows in order.
torch::Tensor attend_fast(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          const std::vector<Segment>& segments, const DecodeGroup& group, size_t layer) {
  std::vector<torch::Tensor> outs;  // the group's [B, Nq * D], then per segment: [t, Nq * D]
  outs.reserve(segments.size() + 1);
  if (group.arena != nullptr) {
    const int64_t b = group.slots.size(0);
    outs.push_back(attend_group(q.narrow(0, 0, b), k.narrow(0, 0, b), v.narrow(0, 0, b), group, layer));
  }
  for (const Segment& s : segments) {
    torch::Tensor& k_cache = s.kv->k[layer];  // [Nkv, capacity, D]
    torch::Tensor& v_cache = s.kv->v[layer];
    k_cache.narrow(1, s.start, s.t).copy_(k.narrow(0, s.row, s.t).transpose(0, 1));
    v_cache.narrow(1, s.start, s.t).copy_(v.narrow(0, s.row, s.t).transpose(0, 1));
    const int64_t len = s.start + s.t;
    outs.push_back(ops::causal_attention(q.narrow(0, s.row, s.t), k_cache.narrow(1, 0, len),
                                         v_cache.narrow(1, 0, len), s.start));
  }
  return outs.size() == 1 ? outs.front() : torch::cat(outs, 0);
}

}  // namespace

torch::Tensor llama_fast_batch(const ModelConfig& c, const FastLayer& l, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin,
                               const std::vector<Segment>& segments, const DecodeGroup& group, size_t layer) {
  const int64_t r = x.size(0), nq = c.n_heads, nkv = c.n_kv_heads;
  const torch::Tensor h = ops::rms_norm(x, l.attn_norm_w, c.norm_eps);                         // [R, H]
  const torch::Tensor qkv = ops::linear(h, l.wqkv, l.bqkv).view({r, nq + 2 * nkv, c.head_dim});  // [R, Nq+2Nkv, D]
  torch::Tensor qk = qkv.narrow(1, 0, nq + nkv);                                                // [R, Nq+Nkv, D]
  if (c.qk_norm) qk = ops::rms_norm(qk, l.qk_norm, c.norm_eps);
  qk = ops::apply_rope(qk, cos, sin);                                  // a new [R, Nq+Nkv, D]
  const torch::Tensor q = qk.narrow(1, 0, nq).mul_(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  const torch::Tensor attn =
      attend_fast(q, qk.narrow(1, nq, nkv), qkv.narrow(1, nq + nkv, nkv), segments, group, layer);
  const torch::Tensor x1 = ops::linear_residual(x, attn, l.wo, l.bo);  // [R, H]
  const torch::Tensor h2 = ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  const torch::Tensor gate_up = ops::linear(h2, l.w_gate_up, l.b_gate_up);  // [R, 2I]
  const int64_t i = gate_up.size(1) / 2;
  return ops::linear_residual(x1, ops::silu_mul(gate_up.narrow(1, 0, i), gate_up.narrow(1, i, i)), l.w_down,
                              l.b_down);
}

torch::Tensor gpt2_fast_batch(const ModelConfig& c, const FastLayer& l, const torch::Tensor& x,
                              const std::vector<Segment>& segments, const DecodeGroup& group, size_t layer) {
  const int64_t r = x.size(0), n = c.n_heads;
  const torch::Tensor h = ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);      // [R, H]
  const torch::Tensor qkv = ops::linear(h, l.wqkv, l.bqkv).view({r, 3 * n, c.head_dim});      // [R, 3N, D]
  const torch::Tensor q = qkv.narrow(1, 0, n).mul(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  const torch::Tensor attn = attend_fast(q, qkv.narrow(1, n, n), qkv.narrow(1, 2 * n, n), segments, group, layer);
  const torch::Tensor x1 = ops::linear_residual(x, attn, l.wo, l.bo);  // [R, H]
  const torch::Tensor h2 = ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  return ops::linear_residual(x1, ops::gelu_tanh(ops::linear(h2, l.w_gate_up, l.b_gate_up)), l.w_down, l.b_down);
}

}  // namespace reprox::engine::blocks
