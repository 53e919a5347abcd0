#include "engine/model/strict_ops.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "engine/kernels/kernels.hpp"

namespace reprox::engine::strict_ops {
namespace {

const float* ptr(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }
float* mut(torch::Tensor& t) { return t.data_ptr<float>(); }

}  // namespace

kernels::WeightMatrix weight_matrix(const torch::Tensor& w) {
  TORCH_CHECK(w.dim() == 2 && w.stride(1) == 1, "a strict weight matrix has unit column stride");
  const int64_t row_bytes = w.stride(0) * static_cast<int64_t>(w.element_size());
  switch (w.scalar_type()) {
    case torch::kFloat16: return {kernels::WeightType::kF16, w.data_ptr(), row_bytes};
    case torch::kBFloat16: return {kernels::WeightType::kBF16, w.data_ptr(), row_bytes};
    case torch::kInt8: return {kernels::WeightType::kQ8, w.data_ptr(), row_bytes};
    default: return {kernels::WeightType::kF32, w.data_ptr<float>(), row_bytes};
  }
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  torch::Tensor y = torch::empty({rows, out}, x.options());
  kernels::linear(ptr(x), rows, in, in, weight_matrix(weight), out, ptr(bias), mut(y), out);
  return y;
}

torch::Tensor embedding(const torch::Tensor& table, const std::vector<int32_t>& ids, int64_t dim) {
  const std::vector<int64_t> rows(ids.begin(), ids.end());
  torch::Tensor x = torch::empty({static_cast<int64_t>(ids.size()), dim}, torch::TensorOptions().dtype(torch::kFloat32));
  kernels::widen_rows(weight_matrix(table), dim, rows.data(), static_cast<int64_t>(rows.size()), mut(x));
  return x;
}

std::vector<torch::Tensor> linear_many(const torch::Tensor& x, std::initializer_list<WeightRef> weights) {
  const int64_t rows = x.size(0), in = x.size(1);
  std::vector<torch::Tensor> ys;
  std::vector<kernels::Projection> outs;
  ys.reserve(weights.size());
  outs.reserve(weights.size());
  for (const WeightRef& wr : weights) {
    ys.push_back(torch::empty({rows, wr.weight.size(0)}, x.options()));
    outs.push_back({weight_matrix(wr.weight), wr.weight.size(0), ptr(wr.bias), mut(ys.back())});
  }
  kernels::linear_many(ptr(x), rows, in, outs.data(), static_cast<int>(outs.size()));
  return ys;
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t d = x.size(-1);
  torch::Tensor y = torch::empty_like(x);
  kernels::rms_norm(ptr(x), x.numel() / d, d, ptr(weight), static_cast<float>(eps), mut(y));
  return y;
}

void rms_norm_heads_(torch::Tensor& x, int64_t head_dim, const torch::Tensor& weight, double eps) {
  kernels::rms_norm(ptr(x), x.numel() / head_dim, head_dim, ptr(weight), static_cast<float>(eps), mut(x));
}

torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps) {
  const int64_t d = x.size(-1);
  torch::Tensor y = torch::empty_like(x);
  kernels::layer_norm(ptr(x), x.numel() / d, d, ptr(weight), ptr(bias), static_cast<float>(eps), mut(y));
  return y;
}

void silu_mul_(torch::Tensor& gate, const torch::Tensor& up) {
  kernels::silu_mul(ptr(gate), ptr(up), gate.numel(), mut(gate));
}

void gelu_tanh_(torch::Tensor& x) { kernels::gelu_tanh(ptr(x), x.numel(), mut(x)); }

void apply_rope_(torch::Tensor& x, int64_t heads, int64_t head_dim, const torch::Tensor& cos,
                 const torch::Tensor& sin) {
  const int64_t t = x.size(0);
  kernels::apply_rope(mut(x), heads, t, head_dim, /*head_stride=*/head_dim, /*token_stride=*/heads * head_dim,
                      ptr(cos), ptr(sin));
}

std::pair<torch::Tensor, torch::Tensor> rope_tables(const torch::Tensor& inv_freq, int64_t start, int64_t t) {
  const int64_t half = inv_freq.size(0);
  const torch::Tensor freq = inv_freq.to(torch::kCPU).to(torch::kFloat64).contiguous();
  const double* f = freq.data_ptr<double>();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor cos = torch::empty({t, half}, opts);
  torch::Tensor sin = torch::empty({t, half}, opts);
  float* c = mut(cos);
  float* s = mut(sin);
  for (int64_t i = 0; i < t; ++i) {
    const double pos = static_cast<double>(start + i);
    for (int64_t j = 0; j < half; ++j) {
      const double angle = pos * f[j];
      c[i * half + j] = static_cast<float>(std::cos(angle));
      s[i * half + j] = static_cast<float>(std::sin(angle));
    }
  }
  return {cos, sin};
}

void causal_attention_into(const torch::Tensor& q, int64_t n_heads, int64_t head_dim, const torch::Tensor& k_cache,
                           const torch::Tensor& v_cache, int64_t q_offset, torch::Tensor out, bool on_calling_thread) {
  const int64_t t = q.size(0);
  kernels::AttentionArgs args;
  args.q = ptr(q);
  args.n_heads = n_heads;
  args.t = t;
  args.head_dim = head_dim;
  args.q_head_stride = head_dim;
  args.q_token_stride = n_heads * head_dim;
  args.k = ptr(k_cache);
  args.v = ptr(v_cache);
  args.n_kv_heads = k_cache.size(0);
  args.kv_head_stride = k_cache.size(1) * head_dim;
  args.q_offset = q_offset;
  args.out = mut(out);
  args.on_calling_thread = on_calling_thread;
  kernels::causal_attention(args);
}

}  // namespace reprox::engine::strict_ops
