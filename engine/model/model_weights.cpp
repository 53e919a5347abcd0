#include "engine/model/model_weights.hpp"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include <torch/types.h>

#include "engine/model/tensor_reader.hpp"
#include "engine/model/weight_set.hpp"

namespace reprox::engine {
namespace {

// The strict storage type of the matrices for a `weights` option value.
kernels::WeightType matrix_type(const std::string& weights, const WeightSet& set, const ModelConfig& c) {
  if (weights == "f32") return kernels::WeightType::kF32;
  if (weights == "f16") return kernels::WeightType::kF16;
  if (weights == "bf16") return kernels::WeightType::kBF16;
  if (weights == "q8") return kernels::WeightType::kQ8;
  if (weights != "auto") {
    throw std::runtime_error("unsupported weights '" + weights + "' (supported: auto, f32, f16, bf16, q8)");
  }
  const std::string root = set.find("transformer.wte.weight") != nullptr ? "transformer." : "";
  const TensorView* embed =
      set.find(c.family == ArchFamily::kGpt2 ? root + "wte.weight" : "model.embed_tokens.weight");
  if (embed != nullptr && embed->dtype == DType::F16) return kernels::WeightType::kF16;
  if (embed != nullptr && embed->dtype == DType::BF16) return kernels::WeightType::kBF16;
  return kernels::WeightType::kF32;  // a missing embedding is reported by the loader
}

void load_llama_family(const ModelConfig& c, TensorReader& r, ModelWeights& w) {
  const int64_t H = c.hidden, D = c.head_dim, Nq = c.n_heads, Nkv = c.n_kv_heads, I = c.intermediate;
  w.embed = r.read_matrix("model.embed_tokens.weight", {c.vocab_size, H});
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm_w = r.read(p + "input_layernorm.weight", {H});
    l.wq = r.read_matrix(p + "self_attn.q_proj.weight", {Nq * D, H});
    l.wk = r.read_matrix(p + "self_attn.k_proj.weight", {Nkv * D, H});
    l.wv = r.read_matrix(p + "self_attn.v_proj.weight", {Nkv * D, H});
    l.wo = r.read_matrix(p + "self_attn.o_proj.weight", {H, Nq * D});
    l.bq = r.read_optional(p + "self_attn.q_proj.bias", {Nq * D}, c.attention_bias);
    l.bk = r.read_optional(p + "self_attn.k_proj.bias", {Nkv * D}, c.attention_bias);
    l.bv = r.read_optional(p + "self_attn.v_proj.bias", {Nkv * D}, c.attention_bias);
    l.bo = r.read_optional(p + "self_attn.o_proj.bias", {H}, c.o_proj_bias);
    l.q_norm = r.read_optional(p + "self_attn.q_norm.weight", {D}, c.qk_norm);
    l.k_norm = r.read_optional(p + "self_attn.k_norm.weight", {D}, c.qk_norm);
    l.mlp_norm_w = r.read(p + "post_attention_layernorm.weight", {H});
    l.w_gate = r.read_matrix(p + "mlp.gate_proj.weight", {I, H});
    l.w_up = r.read_matrix(p + "mlp.up_proj.weight", {I, H});
    l.w_down = r.read_matrix(p + "mlp.down_proj.weight", {H, I});
    l.b_gate = r.read_optional(p + "mlp.gate_proj.bias", {I}, c.mlp_bias);
    l.b_up = r.read_optional(p + "mlp.up_proj.bias", {I}, c.mlp_bias);
    l.b_down = r.read_optional(p + "mlp.down_proj.bias", {H}, c.mlp_bias);
    w.layers.push_back(std::move(l));
  }
  w.final_norm_w = r.read("model.norm.weight", {H});
  if (!c.tie_embeddings && r.has("lm_head.weight")) {
    w.lm_head = r.read_matrix("lm_head.weight", {c.vocab_size, H});
  } else {
    w.lm_head = w.embed;
  }
  const std::vector<double> inv = rope_inverse_frequencies(c);
  w.rope_inv_freq = torch::tensor(inv, torch::TensorOptions().dtype(torch::kFloat64)).to(w.options.device());
}

void load_gpt2(const ModelConfig& c, TensorReader& r, ModelWeights& w) {
  const int64_t H = c.hidden, I = c.intermediate;
  const std::string root = r.has("transformer.wte.weight") ? "transformer." : "";
  w.embed = r.read_matrix(root + "wte.weight", {c.vocab_size, H});
  w.positions = r.read(root + "wpe.weight", {c.max_positions, H});
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = root + "h." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm_w = r.read(p + "ln_1.weight", {H});
    l.attn_norm_b = r.read(p + "ln_1.bias", {H});
    // Conv1D stores [in, out]; transpose to the [out, in] layout of ops::linear.
    const torch::Tensor qkv_w = r.read_raw(p + "attn.c_attn.weight", {H, 3 * H}).t();
    const torch::Tensor qkv_b = r.read(p + "attn.c_attn.bias", {3 * H});
    l.wq = r.to_storage(qkv_w.narrow(0, 0, H));
    l.wk = r.to_storage(qkv_w.narrow(0, H, H));
    l.wv = r.to_storage(qkv_w.narrow(0, 2 * H, H));
    l.bq = qkv_b.narrow(0, 0, H).contiguous();
    l.bk = qkv_b.narrow(0, H, H).contiguous();
    l.bv = qkv_b.narrow(0, 2 * H, H).contiguous();
    l.wo = r.to_storage(r.read_raw(p + "attn.c_proj.weight", {H, H}).t());
    l.bo = r.read(p + "attn.c_proj.bias", {H});
    l.mlp_norm_w = r.read(p + "ln_2.weight", {H});
    l.mlp_norm_b = r.read(p + "ln_2.bias", {H});
    l.w_up = r.to_storage(r.read_raw(p + "mlp.c_fc.weight", {H, I}).t());
    l.b_up = r.read(p + "mlp.c_fc.bias", {I});
    l.w_down = r.to_storage(r.read_raw(p + "mlp.c_proj.weight", {I, H}).t());
    l.b_down = r.read(p + "mlp.c_proj.bias", {H});
    w.layers.push_back(std::move(l));
  }
  w.final_norm_w = r.read(root + "ln_f.weight", {H});
  w.final_norm_b = r.read(root + "ln_f.bias", {H});
  if (!c.tie_embeddings && r.has("lm_head.weight")) {
    w.lm_head = r.read_matrix("lm_head.weight", {c.vocab_size, H});
  } else {
    w.lm_head = w.embed;
  }
}

}  // namespace

ModelWeights load_model_weights(const std::string& dir, const ModelConfig& config,
                                const torch::TensorOptions& options, bool progress, std::string& fingerprint,
                                const std::string& weights_mode) {
  const WeightSet weights = WeightSet::open(dir);
  fingerprint = compute_weights_fingerprint((std::filesystem::path(dir) / "config.json").string(), weights);
  ModelWeights out;
  out.options = options;
  std::optional<kernels::WeightType> storage;
  if (!weights_mode.empty()) storage = out.matrix_type = matrix_type(weights_mode, weights, config);
  TensorReader reader(dir, weights, options, progress, storage);
  if (config.family == ArchFamily::kGpt2) {
    load_gpt2(config, reader, out);
  } else {
    load_llama_family(config, reader, out);
  }
  return out;
}

}  // namespace reprox::engine
