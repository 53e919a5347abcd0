#pragma once
// The numeric building blocks of the fast (libtorch) forward pass; the
// strict mode uses strict_ops.hpp instead.
// All tensors are on the model's device and in its compute dtype unless noted.
#include <cstdint>

#include <torch/types.h>

namespace reprox::engine::ops {

// x [T, in], weight [out, in], bias [out] or undefined -> [T, out]
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// x [..., D], weight [D] -> x / sqrt(mean(x^2) + eps) * weight (reduced in fp32)
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// x [..., D], weight/bias [D]
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps);

// silu(gate) * up, elementwise
torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up);

// GELU, tanh approximation (GPT-2's gelu_new)
torch::Tensor gelu_tanh(const torch::Tensor& x);

// x [heads, T, head_dim]; cos/sin [T, head_dim/2]. Rotates the two halves of
// head_dim (the Hugging Face "rotate_half" layout).
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// q [n_heads, T, head_dim]; k, v [n_kv_heads, L, head_dim] (the cache prefix,
// L = q_offset + T); query t sits at position q_offset + t and sees keys 0..q_offset+t.
// Query head h uses kv head h / (n_heads / n_kv_heads). Softmax in fp32.
// Returns [T, n_heads * head_dim].
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               int64_t q_offset);

}  // namespace reprox::engine::ops
