// The libtorch ("fast") forward pass over several sequences at once: the
// norms, projections and MLP run over the rows of all segments (ops.hpp on
// [R, ...]); RoPE, the cache writes and attention run per segment, on
// [heads, t, D] views of its rows, as the single-sequence blocks do.
#include <torch/torch.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/model/ops.hpp"

namespace reprox::engine::blocks {
namespace {

// Per segment: RoPE on its rows of q and k (when cos/sin are defined), its
// keys/values into its cache, causal attention over its cache prefix.
// q [R, Nq, D]; k, v [R, Nkv, D]. Returns [R, Nq * D], rows in segment order.
torch::Tensor attend_fast(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          const std::vector<Segment>& segments, size_t layer) {
  std::vector<torch::Tensor> outs;  // per segment: [t, Nq * D]
  outs.reserve(segments.size());
  for (const Segment& s : segments) {
    torch::Tensor qs = q.narrow(0, s.row, s.t).transpose(0, 1);  // [Nq, t, D]
    torch::Tensor ks = k.narrow(0, s.row, s.t).transpose(0, 1);  // [Nkv, t, D]
    if (s.cos.defined()) {
      qs = ops::apply_rope(qs, s.cos, s.sin);
      ks = ops::apply_rope(ks, s.cos, s.sin);
    }
    torch::Tensor& k_cache = s.kv->k[layer];  // [Nkv, capacity, D]
    torch::Tensor& v_cache = s.kv->v[layer];
    k_cache.narrow(1, s.start, s.t).copy_(ks);
    v_cache.narrow(1, s.start, s.t).copy_(v.narrow(0, s.row, s.t).transpose(0, 1));
    const int64_t len = s.start + s.t;
    outs.push_back(ops::causal_attention(qs, k_cache.narrow(1, 0, len), v_cache.narrow(1, 0, len), s.start));
  }
  return outs.size() == 1 ? outs.front() : torch::cat(outs, 0);
}

}  // namespace

torch::Tensor llama_fast_batch(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                               const std::vector<Segment>& segments, size_t layer) {
  const int64_t r = x.size(0);
  const torch::Tensor h = ops::rms_norm(x, l.attn_norm_w, c.norm_eps);                   // [R, H]
  torch::Tensor q = ops::linear(h, l.wq, l.bq).view({r, c.n_heads, c.head_dim});         // [R, Nq, D]
  torch::Tensor k = ops::linear(h, l.wk, l.bk).view({r, c.n_kv_heads, c.head_dim});      // [R, Nkv, D]
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({r, c.n_kv_heads, c.head_dim});  // [R, Nkv, D]
  if (c.qk_norm) {
    q = ops::rms_norm(q, l.q_norm, c.norm_eps);
    k = ops::rms_norm(k, l.k_norm, c.norm_eps);
  }
  const torch::Tensor attn = attend_fast(q, k, v, segments, layer);  // [R, Nq * D]
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);        // [R, H]
  const torch::Tensor h2 = ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  const torch::Tensor mlp = ops::silu_mul(ops::linear(h2, l.w_gate, l.b_gate), ops::linear(h2, l.w_up, l.b_up));  // [R, I]
  return x1 + ops::linear(mlp, l.w_down, l.b_down);
}

torch::Tensor gpt2_fast_batch(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                              const std::vector<Segment>& segments, size_t layer) {
  const int64_t r = x.size(0);
  const torch::Tensor h = ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);  // [R, H]
  const torch::Tensor q = ops::linear(h, l.wq, l.bq).view({r, c.n_heads, c.head_dim});     // [R, Nq, D]
  const torch::Tensor k = ops::linear(h, l.wk, l.bk).view({r, c.n_kv_heads, c.head_dim});  // [R, Nkv, D]
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({r, c.n_kv_heads, c.head_dim});  // [R, Nkv, D]
  const torch::Tensor attn = attend_fast(q, k, v, segments, layer);  // [R, Nq * D]; no RoPE (cos undefined)
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);        // [R, H]
  const torch::Tensor h2 = ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  return x1 + ops::linear(ops::gelu_tanh(ops::linear(h2, l.w_up, l.b_up)), l.w_down, l.b_down);  // [R, H]
}

}  // namespace reprox::engine::blocks
