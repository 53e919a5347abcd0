#include "engine/model/fast_weights.hpp"

#include <torch/types.h>

namespace reprox::engine {
namespace {

// cat of the defined tensors; undefined when none is.
torch::Tensor cat_defined(std::vector<torch::Tensor> parts) {
  std::vector<torch::Tensor> defined;
  for (torch::Tensor& t : parts) {
    if (t.defined()) defined.push_back(std::move(t));
  }
  return defined.empty() ? torch::Tensor() : torch::cat(defined, 0).contiguous();
}

}  // namespace

FastWeights fuse_fast_weights(ModelWeights& w, const ModelConfig& c) {
  FastWeights out;
  for (LayerWeights& l : w.layers) {
    FastLayer f;
    f.attn_norm_w = l.attn_norm_w;
    f.attn_norm_b = l.attn_norm_b;
    f.wqkv = cat_defined({std::move(l.wq), std::move(l.wk), std::move(l.wv)});
    if (l.bq.defined()) f.bqkv = cat_defined({std::move(l.bq), std::move(l.bk), std::move(l.bv)});
    if (l.q_norm.defined()) {
      f.qk_norm = torch::cat({l.q_norm.unsqueeze(0).expand({c.n_heads, c.head_dim}),
                              l.k_norm.unsqueeze(0).expand({c.n_kv_heads, c.head_dim})},
                             0)
                      .contiguous();
    }
    f.wo = std::move(l.wo);
    f.bo = std::move(l.bo);
    f.mlp_norm_w = l.mlp_norm_w;
    f.mlp_norm_b = l.mlp_norm_b;
    f.w_gate_up = cat_defined({std::move(l.w_gate), std::move(l.w_up)});
    if (l.b_up.defined()) f.b_gate_up = cat_defined({std::move(l.b_gate), std::move(l.b_up)});
    f.w_down = std::move(l.w_down);
    f.b_down = std::move(l.b_down);
    out.layers.push_back(std::move(f));
    l = LayerWeights();
  }
  w.layers.clear();
  if (c.family != ArchFamily::kGpt2) {
    const torch::Tensor pos =
        torch::arange(0, c.max_positions, torch::TensorOptions().dtype(torch::kFloat64).device(w.options.device()))
            .unsqueeze(1);
    const torch::Tensor angles = pos * w.rope_inv_freq.unsqueeze(0);  // [P, D/2] float64
    const torch::Tensor cos = angles.cos().to(w.options.dtype());
    const torch::Tensor sin = angles.sin().to(w.options.dtype());
    out.rope_cos = torch::cat({cos, cos}, 1).contiguous();
    out.rope_sin = torch::cat({sin.neg(), sin}, 1).contiguous();
  }
  return out;
}

}  // namespace reprox::engine
