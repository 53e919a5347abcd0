#include "engine/model/ops.hpp"

#include <cmath>

#include <torch/torch.h>

namespace reprox::engine::ops {

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return bias.defined() ? torch::linear(x, weight, bias) : torch::linear(x, weight);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const torch::Tensor xf = x.to(torch::kFloat32);
  const torch::Tensor normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return normed.to(x.scalar_type()) * weight;
}

torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps) {
  return torch::layer_norm(x, {x.size(-1)}, weight, bias, eps);
}

torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up) { return torch::silu(gate) * up; }

torch::Tensor gelu_tanh(const torch::Tensor& x) { return torch::gelu(x, "tanh"); }

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const torch::Tensor x1 = x.narrow(-1, 0, half);
  const torch::Tensor x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               int64_t q_offset) {
  const int64_t n_heads = q.size(0), t = q.size(1), head_dim = q.size(2);
  const int64_t n_kv = k.size(0), len = k.size(1);
  const int64_t group = n_heads / n_kv;
  // [n_kv, group * T, head_dim]: the query heads sharing one kv head, stacked.
  const torch::Tensor qg = q.contiguous().view({n_kv, group * t, head_dim});
  torch::Tensor scores = torch::bmm(qg, k.transpose(1, 2)).to(torch::kFloat32);  // [n_kv, group*T, L]
  scores = scores.mul(1.0 / std::sqrt(static_cast<double>(head_dim))).view({n_kv, group, t, len});
  const auto opts = torch::TensorOptions().dtype(torch::kLong).device(q.device());
  const torch::Tensor query_pos = torch::arange(q_offset, q_offset + t, opts).unsqueeze(1);  // [T, 1]
  const torch::Tensor key_pos = torch::arange(0, len, opts).unsqueeze(0);                   // [1, L]
  scores = scores.masked_fill(key_pos > query_pos, -std::numeric_limits<float>::infinity());
  const torch::Tensor probs = torch::softmax(scores, -1).to(v.scalar_type()).view({n_kv, group * t, len});
  const torch::Tensor out = torch::bmm(probs, v).view({n_heads, t, head_dim});  // [n_heads, T, head_dim]
  return out.transpose(0, 1).reshape({t, n_heads * head_dim});
}

}  // namespace reprox::engine::ops
