#pragma once
// Weight tensors of a loaded model on the model device. Shapes use
// H = hidden, D = head_dim, Nq = n_heads, Nkv = n_kv_heads, I = intermediate,
// V = vocab, P = max positions. Optional tensors are undefined.
//
// Norm weights, biases, GPT-2 positions and RoPE frequencies are in the
// compute dtype. The weight matrices (the projections wq .. w_down, embed
// and lm_head) are in the compute dtype in fast mode; in strict mode they are
// stored as ModelWeights::matrix_type says: float32, float16 or bfloat16
// tensors of the shape shown, or, for q8, int8 tensors
// [rows, kernels::q8_row_bytes(cols)] in the kernels' q8 row layout.
#include <string>
#include <vector>

#include <torch/types.h>

#include "engine/kernels/kernels.hpp"
#include "engine/model/model_config.hpp"

namespace reprox::engine {

struct LayerWeights {
  torch::Tensor attn_norm_w, attn_norm_b;  // [H]; bias only for GPT-2
  torch::Tensor wq, bq;                    // [Nq*D, H], [Nq*D]
  torch::Tensor wk, bk;                    // [Nkv*D, H], [Nkv*D]
  torch::Tensor wv, bv;                    // [Nkv*D, H], [Nkv*D]
  torch::Tensor wo, bo;                    // [H, Nq*D], [H]
  torch::Tensor q_norm, k_norm;            // [D] (Qwen3)
  torch::Tensor mlp_norm_w, mlp_norm_b;    // [H]; bias only for GPT-2
  torch::Tensor w_gate, b_gate;            // [I, H] (llama family only)
  torch::Tensor w_up, b_up;                // [I, H]; GPT-2 c_fc transposed
  torch::Tensor w_down, b_down;            // [H, I]; GPT-2 mlp c_proj transposed
};

struct ModelWeights {
  torch::Tensor embed;                 // [V, H]
  torch::Tensor positions;             // [P, H] GPT-2 learned position embeddings
  std::vector<LayerWeights> layers;
  torch::Tensor final_norm_w, final_norm_b;  // [H]
  torch::Tensor lm_head;               // [V, H]; aliases embed when tied
  torch::Tensor rope_inv_freq;         // [D/2] float64 on the device (llama family)
  torch::TensorOptions options;        // compute dtype + device
  kernels::WeightType matrix_type = kernels::WeightType::kF32;  // strict mode's matrix storage
};

// Loads every tensor named by the architecture from `dir`, checking shapes
// and dtypes. Sets `fingerprint` and returns the weights. Throws
// std::runtime_error naming the file and tensor.
// weights: "" keeps the matrices in the compute dtype (fast mode); else the
// strict storage: "auto" (the checkpoint's dtype, judged by the embedding:
// F32 -> f32, F16 -> f16, BF16 -> bf16), "f32", "f16", "bf16" or "q8"
// (quantized at load, kernels::quantize_q8). Only one copy of each matrix
// stays in memory.
ModelWeights load_model_weights(const std::string& dir, const ModelConfig& config,
                                const torch::TensorOptions& options, bool progress, std::string& fingerprint,
                                const std::string& weights = "");

}  // namespace reprox::engine
