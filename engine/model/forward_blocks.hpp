#pragma once
// One transformer block per architecture family and numeric mode. Each takes
// the residual stream x [T, H] of the tokens at positions start..start+T-1,
// writes their keys/values into the layer's cache (k_cache, v_cache
// [n_kv_heads, capacity, head_dim], capacity >= start + T) and returns the
// new residual stream [T, H].
#include <cstdint>

#include <torch/types.h>

#include "model_config.hpp"
#include "model_weights.hpp"

namespace reprox::engine::blocks {

// fast: libtorch's kernels (ops.hpp), any dtype and device.
// cos/sin [1, T, D/2] in the compute dtype.
torch::Tensor llama_fast(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                         const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k_cache,
                         torch::Tensor& v_cache, int64_t start);
torch::Tensor gpt2_fast(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                        torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start);

// strict: reprox::kernels (strict_ops.hpp), fp32 CPU only; bitwise the same
// for a token whatever the other tokens of the call and the cache capacity.
// cos/sin [T, D/2] fp32 from strict_ops::rope_tables.
torch::Tensor llama_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                           const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k_cache,
                           torch::Tensor& v_cache, int64_t start);
torch::Tensor gpt2_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                          torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start);

}  // namespace reprox::engine::blocks
