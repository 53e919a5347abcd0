// The libtorch ("fast") forward pass: ops.hpp on [heads, T, D] views.
#include <torch/torch.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/model/ops.hpp"

namespace reprox::engine::blocks {

torch::Tensor llama_fast(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                         const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k_cache,
                         torch::Tensor& v_cache, int64_t start) {
  const int64_t t = x.size(0);
  const torch::Tensor h = ops::rms_norm(x, l.attn_norm_w, c.norm_eps);
  torch::Tensor q = ops::linear(h, l.wq, l.bq).view({t, c.n_heads, c.head_dim});
  torch::Tensor k = ops::linear(h, l.wk, l.bk).view({t, c.n_kv_heads, c.head_dim});
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({t, c.n_kv_heads, c.head_dim});
  if (c.qk_norm) {
    q = ops::rms_norm(q, l.q_norm, c.norm_eps);
    k = ops::rms_norm(k, l.k_norm, c.norm_eps);
  }
  q = ops::apply_rope(q.transpose(0, 1), cos, sin);  // [Nq, T, D]
  k = ops::apply_rope(k.transpose(0, 1), cos, sin);  // [Nkv, T, D]
  k_cache.narrow(1, start, t).copy_(k);
  v_cache.narrow(1, start, t).copy_(v.transpose(0, 1));
  const torch::Tensor attn = ops::causal_attention(q, k_cache.narrow(1, 0, start + t),
                                                   v_cache.narrow(1, 0, start + t), start);
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);
  const torch::Tensor h2 = ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  const torch::Tensor mlp = ops::silu_mul(ops::linear(h2, l.w_gate, l.b_gate), ops::linear(h2, l.w_up, l.b_up));
  return x1 + ops::linear(mlp, l.w_down, l.b_down);
}

torch::Tensor gpt2_fast(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                        torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start) {
  const int64_t t = x.size(0);
  const torch::Tensor h = ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);
  const torch::Tensor q = ops::linear(h, l.wq, l.bq).view({t, c.n_heads, c.head_dim}).transpose(0, 1);
  const torch::Tensor k = ops::linear(h, l.wk, l.bk).view({t, c.n_kv_heads, c.head_dim}).transpose(0, 1);
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({t, c.n_kv_heads, c.head_dim}).transpose(0, 1);
  k_cache.narrow(1, start, t).copy_(k);
  v_cache.narrow(1, start, t).copy_(v);
  const torch::Tensor attn = ops::causal_attention(q, k_cache.narrow(1, 0, start + t),
                                                   v_cache.narrow(1, 0, start + t), start);
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);
  const torch::Tensor h2 = ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  return x1 + ops::linear(ops::gelu_tanh(ops::linear(h2, l.w_up, l.b_up)), l.w_down, l.b_down);
}

}  // namespace reprox::engine::blocks
