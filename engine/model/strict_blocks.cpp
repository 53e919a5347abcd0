// The strict forward pass: strict_ops.hpp on [T, heads * D] buffers. Torch
// only allocates, copies into the cache and adds the residual (one rounding
// per element, so the same bits however the adds are vectorized).
#include <torch/torch.h>

#include "forward_blocks.hpp"
#include "strict_ops.hpp"

namespace reprox::engine::blocks {
namespace {

// Copies the new tokens' keys or values, [T, n_kv * D], into the cache
// [n_kv, capacity, D] at positions start..start+T-1.
void store_in_cache(const torch::Tensor& kv_new, torch::Tensor& cache, int64_t start) {
  const int64_t t = kv_new.size(0), n_kv = cache.size(0), d = cache.size(2);
  cache.narrow(1, start, t).copy_(kv_new.view({t, n_kv, d}).transpose(0, 1));
}

}  // namespace

torch::Tensor llama_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                           const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k_cache,
                           torch::Tensor& v_cache, int64_t start) {
  const torch::Tensor h = strict_ops::rms_norm(x, l.attn_norm_w, c.norm_eps);  // [T, H]
  torch::Tensor q = strict_ops::linear(h, l.wq, l.bq);                        // [T, Nq*D]
  torch::Tensor k = strict_ops::linear(h, l.wk, l.bk);                        // [T, Nkv*D]
  const torch::Tensor v = strict_ops::linear(h, l.wv, l.bv);                  // [T, Nkv*D]
  if (c.qk_norm) {
    strict_ops::rms_norm_heads_(q, c.head_dim, l.q_norm, c.norm_eps);
    strict_ops::rms_norm_heads_(k, c.head_dim, l.k_norm, c.norm_eps);
  }
  strict_ops::apply_rope_(q, c.n_heads, c.head_dim, cos, sin);
  strict_ops::apply_rope_(k, c.n_kv_heads, c.head_dim, cos, sin);
  store_in_cache(k, k_cache, start);
  store_in_cache(v, v_cache, start);
  const torch::Tensor attn = strict_ops::causal_attention(q, c.n_heads, c.head_dim, k_cache, v_cache, start);
  torch::Tensor x1 = strict_ops::linear(attn, l.wo, l.bo);
  x1.add_(x);
  const torch::Tensor h2 = strict_ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  torch::Tensor gate = strict_ops::linear(h2, l.w_gate, l.b_gate);  // [T, I]
  strict_ops::silu_mul_(gate, strict_ops::linear(h2, l.w_up, l.b_up));
  torch::Tensor out = strict_ops::linear(gate, l.w_down, l.b_down);
  out.add_(x1);
  return out;
}

torch::Tensor gpt2_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                          torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start) {
  const torch::Tensor h = strict_ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);
  const torch::Tensor q = strict_ops::linear(h, l.wq, l.bq);  // [T, Nq*D]
  store_in_cache(strict_ops::linear(h, l.wk, l.bk), k_cache, start);
  store_in_cache(strict_ops::linear(h, l.wv, l.bv), v_cache, start);
  const torch::Tensor attn = strict_ops::causal_attention(q, c.n_heads, c.head_dim, k_cache, v_cache, start);
  torch::Tensor x1 = strict_ops::linear(attn, l.wo, l.bo);
  x1.add_(x);
  const torch::Tensor h2 = strict_ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  torch::Tensor up = strict_ops::linear(h2, l.w_up, l.b_up);  // [T, I]
  strict_ops::gelu_tanh_(up);
  torch::Tensor out = strict_ops::linear(up, l.w_down, l.b_down);
  out.add_(x1);
  return out;
}

}  // namespace reprox::engine::blocks
