#pragma once
// The numeric building blocks of the fast (libtorch) forward pass; the
// strict mode uses strict_ops.hpp instead.
// All tensors are on the model's device and in its compute dtype unless noted.
#include <cstdint>

#include <torch/types.h>

namespace reprox::engine::ops {

// x [T, in], weight [out, in], bias [out] or undefined -> [T, out]
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// x [..., D], weight [D] -> x / sqrt(mean(x^2) + eps) * weight (reduced in
// fp32). On a CUDA device, where fused_rms_norm(device) says so, this is
// libtorch's own rms_norm (one fused kernel in recent releases, against
// eight operations): close to the composite form, not bitwise the same.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// Whether rms_norm runs libtorch's rms_norm on `device`: a CUDA device, a
// libtorch that has it (2.4 and later) and the CMake option
// REPROX_FUSED_NORM on. It changes a step's bits, so it is part of the
// model's numeric mode id.
bool fused_rms_norm(const torch::Device& device);

// x [..., D], weight/bias [D]
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps);

// silu(gate) * up, elementwise
torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up);

// GELU, tanh approximation (GPT-2's gelu_new)
torch::Tensor gelu_tanh(const torch::Tensor& x);

// Rotary embedding in rotate-half form: x * cos + roll(x, D/2) * sin, with
// x [R, heads, D] and the rows' table entries cos, sin [R, 1, D] as
// FastWeights holds them (sin carries the sign of the first half).
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// x + a @ w^T (+ b): the residual add inside the matrix product. x [R, out],
// a [R, in], w [out, in], b [out] or undefined.
torch::Tensor linear_residual(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& w,
                              const torch::Tensor& b);

// Causal attention of one sequence's queries over its cache prefix.
// q [T, n_heads, D], already multiplied by 1/sqrt(D); k, v [n_kv_heads, L, D]
// with L = q_offset + T; query t sits at position q_offset + t and sees keys
// 0..q_offset+t (a single query sees them all: no mask is built). Query head
// h uses kv head h / (n_heads / n_kv_heads). Softmax in fp32.
// Returns [T, n_heads * D].
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               int64_t q_offset);

}  // namespace reprox::engine::ops
