#include "engine/model/ops.hpp"

#include <cmath>
#include <limits>

#include <torch/types.h>
#include <torch/version.h>

// libtorch's rms_norm (2.4 and later); REPROX_FUSED_NORM comes from CMake.
#if defined(REPROX_FUSED_NORM) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define REPROX_HAS_TORCH_RMS_NORM 1
#else
#define REPROX_HAS_TORCH_RMS_NORM 0
#endif

namespace reprox::engine::ops {

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return bias.defined() ? torch::linear(x, weight, bias) : torch::linear(x, weight);
}

bool fused_rms_norm(const torch::Device& device) { return REPROX_HAS_TORCH_RMS_NORM && device.is_cuda(); }

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
#if REPROX_HAS_TORCH_RMS_NORM
  if (x.is_cuda()) return at::rms_norm(x, {x.size(-1)}, weight, eps);
#endif
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
  return torch::addcmul(x * cos, x.roll(x.size(-1) / 2, -1), sin);
}

torch::Tensor linear_residual(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& w,
                              const torch::Tensor& b) {
  torch::Tensor out = torch::addmm(x, a, w.t());
  return b.defined() ? out.add_(b) : out;
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               int64_t q_offset) {
  const int64_t t = q.size(0), n_heads = q.size(1), head_dim = q.size(2);
  const int64_t n_kv = k.size(0), len = k.size(1);
  const int64_t group = n_heads / n_kv;
  // [n_kv, group * T, D]: the query heads sharing one kv head, stacked (a
  // view when T is 1).
  const torch::Tensor qg = q.transpose(0, 1).reshape({n_kv, group * t, head_dim});
  torch::Tensor scores = torch::bmm(qg, k.transpose(1, 2));  // [n_kv, group*T, L]
  if (t > 1) {
    const torch::Tensor future =
        torch::ones({t, len}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu_(q_offset + 1);
    scores = scores.view({n_kv, group, t, len}).masked_fill(future, -std::numeric_limits<float>::infinity());
  }
  const torch::Tensor probs =
      torch::softmax(scores, -1, torch::kFloat32).to(v.scalar_type()).view({n_kv, group * t, len});
  const torch::Tensor out = torch::bmm(probs, v).view({n_heads, t, head_dim});  // [n_heads, T, D]
  return out.transpose(0, 1).reshape({t, n_heads * head_dim});
}

}  // namespace reprox::engine::ops
