// The strict forward pass: strict_ops.hpp on [T, heads * D] buffers. Torch
// only allocates, copies into the cache and adds the residual (one rounding
// per element, so the same bits however the adds are vectorized).
#include <torch/types.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/kernels/kernels.hpp"
#include "engine/model/strict_ops.hpp"

namespace reprox::engine::blocks {
namespace {

// Copies the new tokens' keys or values, [T, n_kv * D], into the cache
// [n_kv, capacity, D] at positions start..start+T-1.
void store_in_cache(const torch::Tensor& kv_new, torch::Tensor& cache, int64_t start) {
  const int64_t t = kv_new.size(0), n_kv = cache.size(0), d = cache.size(2);
  cache.narrow(1, start, t).copy_(kv_new.view({t, n_kv, d}).transpose(0, 1));
}


// Per segment: RoPE on its rows of q and k (llama), its keys/values into its
// cache, attention over its cache into its rows of the result [R, Nq*D].
torch::Tensor attend(const ModelConfig& c, torch::Tensor& q, torch::Tensor& k, const torch::Tensor& v,
                     const std::vector<Segment>& segments, size_t layer, bool rope) {
  torch::Tensor out = torch::empty({q.size(0), c.n_heads * c.head_dim}, q.options());
  std::vector<const Segment*> decodes;  // one query each: run side by side below
  for (const Segment& s : segments) {
    torch::Tensor qs = q.narrow(0, s.row, s.t);
    torch::Tensor ks = k.narrow(0, s.row, s.t);
    if (rope) {
      strict_ops::apply_rope_(qs, c.n_heads, c.head_dim, s.cos, s.sin);
      strict_ops::apply_rope_(ks, c.n_kv_heads, c.head_dim, s.cos, s.sin);
    }
    store_in_cache(ks, s.kv->k[layer], s.start);
    store_in_cache(v.narrow(0, s.row, s.t), s.kv->v[layer], s.start);
    if (s.t == 1 && segments.size() > 1) {
      decodes.push_back(&s);
    } else {
      strict_ops::causal_attention_into(qs, c.n_heads, c.head_dim, s.kv->k[layer], s.kv->v[layer], s.start,
                                        out.narrow(0, s.row, s.t));
    }
  }
  // One kernel-thread fan-out for all the decodes instead of one each; the
  // attention of a query is computed the same way on any thread.
  kernels::parallel_for(static_cast<int>(decodes.size()), [&](int i) {
    const Segment& s = *decodes[static_cast<size_t>(i)];
    strict_ops::causal_attention_into(q.narrow(0, s.row, 1), c.n_heads, c.head_dim, s.kv->k[layer], s.kv->v[layer],
                                      s.start, out.narrow(0, s.row, 1), /*on_calling_thread=*/true);
  });
  return out;
}

}  // namespace

torch::Tensor llama_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                           const std::vector<Segment>& segments, size_t layer) {
  const torch::Tensor h = strict_ops::rms_norm(x, l.attn_norm_w, c.norm_eps);  // [R, H]
  std::vector<torch::Tensor> qkv = strict_ops::linear_many(h, {{l.wq, l.bq}, {l.wk, l.bk}, {l.wv, l.bv}});
  torch::Tensor& q = qkv[0];  // [R, Nq*D]
  torch::Tensor& k = qkv[1];  // [R, Nkv*D]
  const torch::Tensor& v = qkv[2];  // [R, Nkv*D]
  if (c.qk_norm) {
    strict_ops::rms_norm_heads_(q, c.head_dim, l.q_norm, c.norm_eps);
    strict_ops::rms_norm_heads_(k, c.head_dim, l.k_norm, c.norm_eps);
  }
  const torch::Tensor attn = attend(c, q, k, v, segments, layer, /*rope=*/true);
  torch::Tensor x1 = strict_ops::linear(attn, l.wo, l.bo);
  x1.add_(x);
  const torch::Tensor h2 = strict_ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  std::vector<torch::Tensor> gate_up = strict_ops::linear_many(h2, {{l.w_gate, l.b_gate}, {l.w_up, l.b_up}});
  torch::Tensor& gate = gate_up[0];  // [R, I]
  strict_ops::silu_mul_(gate, gate_up[1]);
  torch::Tensor out = strict_ops::linear(gate, l.w_down, l.b_down);
  out.add_(x1);
  return out;
}

torch::Tensor gpt2_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                          const std::vector<Segment>& segments, size_t layer) {
  const torch::Tensor h = strict_ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);
  std::vector<torch::Tensor> qkv = strict_ops::linear_many(h, {{l.wq, l.bq}, {l.wk, l.bk}, {l.wv, l.bv}});
  torch::Tensor& q = qkv[0];  // [R, Nq*D]
  torch::Tensor& k = qkv[1];  // [R, Nkv*D]
  const torch::Tensor& v = qkv[2];  // [R, Nkv*D]
  const torch::Tensor attn = attend(c, q, k, v, segments, layer, /*rope=*/false);
  torch::Tensor x1 = strict_ops::linear(attn, l.wo, l.bo);
  x1.add_(x);
  const torch::Tensor h2 = strict_ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  torch::Tensor up = strict_ops::linear(h2, l.w_up, l.b_up);  // [R, I]
  strict_ops::gelu_tanh_(up);
  torch::Tensor out = strict_ops::linear(up, l.w_down, l.b_down);
  out.add_(x1);
  return out;
}

}  // namespace reprox::engine::blocks
