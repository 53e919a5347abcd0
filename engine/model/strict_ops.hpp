#pragma once
// The strict numeric mode's building blocks: torch tensors in and out, the
// math done by reprox::kernels (fixed reduction order, row- and
// batch-invariant; see engine/kernels/kernels.hpp). Torch only allocates.
//
// Every tensor here is fp32, contiguous and on the CPU (Model::load refuses
// strict mode otherwise), except the weight matrices of linear(),
// linear_many() and embedding(), which may also be float16, bfloat16 or q8
// (int8 [out, kernels::q8_row_bytes(in)], see model_weights.hpp): the
// kernels widen them to fp32 in registers with the fp32 order of operations.
// Activations use the [T, heads * D] layout of the projection outputs: no
// transposes, RoPE and q/k norms run in place on it.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <torch/types.h>

#include "engine/kernels/kernels.hpp"

namespace reprox::engine::strict_ops {

// The kernels' view of a weight matrix tensor (by its dtype: float32,
// float16, bfloat16, or int8 = q8 rows).
kernels::WeightMatrix weight_matrix(const torch::Tensor& w);

// x [T, in], weight [out, in] (or q8 rows), bias [out] or undefined -> [T, out]
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// Rows ids of table [V, dim] (or q8 rows) widened to fp32 -> [ids.size(), dim].
torch::Tensor embedding(const torch::Tensor& table, const std::vector<int32_t>& ids, int64_t dim);

// Several projections of the same x [T, in] in one kernel fan-out: one
// [T, out_i] per weight, bitwise equal to separate linear() calls.
struct WeightRef {
  const torch::Tensor& weight;  // [out_i, in]
  const torch::Tensor& bias;    // [out_i] or undefined
};
std::vector<torch::Tensor> linear_many(const torch::Tensor& x, std::initializer_list<WeightRef> weights);

// x [rows, D] (any shape whose last dim is D), weight [D] -> same shape.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
// In place on x [T, heads * head_dim]: each head's slice normalized with weight [head_dim].
void rms_norm_heads_(torch::Tensor& x, int64_t head_dim, const torch::Tensor& weight, double eps);

// x [rows, D], weight/bias [D] -> same shape.
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, double eps);

// gate <- silu(gate) * up, elementwise; equal shapes.
void silu_mul_(torch::Tensor& gate, const torch::Tensor& up);
// x <- gelu_tanh(x) (GPT-2's gelu_new).
void gelu_tanh_(torch::Tensor& x);

// In place on x [T, heads * head_dim]; cos/sin [T, head_dim / 2] fp32.
void apply_rope_(torch::Tensor& x, int64_t heads, int64_t head_dim, const torch::Tensor& cos,
                 const torch::Tensor& sin);

// RoPE tables for positions start..start+t-1: {cos, sin}, each [t, D/2] fp32.
// Angles are position * inv_freq in double, then std::cos / std::sin, then
// rounded to fp32, one element at a time: a position's values never depend
// on which other positions are in the call.
std::pair<torch::Tensor, torch::Tensor> rope_tables(const torch::Tensor& inv_freq, int64_t start, int64_t t);

// q [T, n_heads * head_dim] (after RoPE); k_cache, v_cache [n_kv_heads,
// capacity, head_dim] holding positions 0..q_offset+T-1. Query i sits at
// position q_offset + i. The result goes into `out` [T, n_heads * head_dim]
// (a contiguous view, e.g. a row range of a larger buffer); q may be a row
// range too.
// on_calling_thread: run on this thread only (for calls made inside kernels::parallel_for).
void causal_attention_into(const torch::Tensor& q, int64_t n_heads, int64_t head_dim, const torch::Tensor& k_cache,
                           const torch::Tensor& v_cache, int64_t q_offset, torch::Tensor out,
                           bool on_calling_thread = false);

}  // namespace reprox::engine::strict_ops
