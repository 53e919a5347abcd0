#pragma once
// Fast mode's weights, laid out for few, large libtorch operations per step
// (on a GPU every operation is a kernel launch, and launches, not bytes,
// bound a small batch): the q/k/v projections fused into one matrix, the
// gate and up projections into another, and RoPE as two tables read by
// position. Shapes: H hidden, D head_dim, Nq / Nkv heads, I intermediate,
// P max positions; all in the compute dtype on the model device.
#include <vector>

#include <torch/types.h>

#include "engine/model/model_config.hpp"
#include "engine/model/model_weights.hpp"

namespace reprox::engine {

struct FastLayer {
  torch::Tensor attn_norm_w, attn_norm_b;  // [H]; bias only for GPT-2
  torch::Tensor wqkv, bqkv;                // [(Nq + 2 Nkv) D, H]: rows of q, then k, then v; bias or undefined
  torch::Tensor qk_norm;                   // [Nq + Nkv, D]: q_norm for each query head, then k_norm (Qwen3)
  torch::Tensor wo, bo;                    // [H, Nq D], [H]
  torch::Tensor mlp_norm_w, mlp_norm_b;    // [H]
  torch::Tensor w_gate_up, b_gate_up;      // llama family [2I, H]: gate rows, then up; GPT-2 [I, H] (c_fc)
  torch::Tensor w_down, b_down;            // [H, I]
};

struct FastWeights {
  std::vector<FastLayer> layers;
  // RoPE in rotate-half form for positions 0..P-1 (llama family):
  // x' = x * cos + roll(x, D/2) * sin with cos = [cos, cos] and
  // sin = [-sin, sin] of the angles position * inv_freq (computed in
  // float64, then cast). [P, D] each.
  torch::Tensor rope_cos, rope_sin;
};

// Moves each layer's tensors out of w.layers (emptied; only one copy of a
// matrix stays in memory) into the fused layout.
FastWeights fuse_fast_weights(ModelWeights& w, const ModelConfig& c);

}  // namespace reprox::engine
