#include "engine/model/model_weights.hpp"

#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <torch/torch.h>

#include "engine/model/weight_set.hpp"

namespace reprox::engine {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

torch::ScalarType torch_dtype(DType dtype) {
  switch (dtype) {
    case DType::F32: return torch::kFloat32;
    case DType::F16: return torch::kFloat16;
    case DType::BF16: return torch::kBFloat16;
  }
  return torch::kFloat32;
}

// Copies named tensors out of the mapped shards into compute-dtype tensors,
// reporting progress for large models.
class TensorReader {
 public:
  TensorReader(const std::string& dir, const WeightSet& weights, torch::TensorOptions options, bool progress)
      : dir_(dir), weights_(weights), options_(options),
        total_(weights.total_bytes()), progress_(progress && total_ > (100u << 20)) {}

  bool has(const std::string& name) const { return weights_.find(name) != nullptr; }

  torch::Tensor read(const std::string& name, const std::vector<int64_t>& expected) {
    const TensorView* view = weights_.find(name);
    if (view == nullptr) {
      throw std::runtime_error("missing tensor '" + name + "' (expected shape " + shape_text(expected) + ") in " +
                               dir_);
    }
    if (view->shape != expected) {
      throw std::runtime_error("tensor '" + name + "' has shape " + shape_text(view->shape) + ", expected " +
                               shape_text(expected) + " (in " + dir_ + ")");
    }
    // Copy first: the mapped bytes may be unaligned for the element type.
    torch::Tensor raw = torch::empty(view->shape, torch::TensorOptions().dtype(torch_dtype(view->dtype)));
    std::memcpy(raw.data_ptr(), view->data, view->nbytes);
    report(view->nbytes);
    return raw.to(options_).contiguous();
  }

  torch::Tensor read_optional(const std::string& name, const std::vector<int64_t>& expected, bool wanted) {
    return wanted ? read(name, expected) : torch::Tensor();
  }

 private:
  void report(size_t bytes) {
    if (!progress_) return;
    loaded_ += bytes;
    const int decile = static_cast<int>(10 * loaded_ / total_);
    if (decile > last_decile_) {
      last_decile_ = decile;
      std::cerr << "reprox: loading weights " << 10 * decile << "% (" << (loaded_ >> 20) << " / " << (total_ >> 20)
                << " MiB)" << std::endl;
    }
  }

  std::string dir_;
  const WeightSet& weights_;
  torch::TensorOptions options_;
  size_t total_;
  bool progress_;
  size_t loaded_ = 0;
  int last_decile_ = 0;
};

void load_llama_family(const ModelConfig& c, TensorReader& r, ModelWeights& w) {
  const int64_t H = c.hidden, D = c.head_dim, Nq = c.n_heads, Nkv = c.n_kv_heads, I = c.intermediate;
  w.embed = r.read("model.embed_tokens.weight", {c.vocab_size, H});
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm_w = r.read(p + "input_layernorm.weight", {H});
    l.wq = r.read(p + "self_attn.q_proj.weight", {Nq * D, H});
    l.wk = r.read(p + "self_attn.k_proj.weight", {Nkv * D, H});
    l.wv = r.read(p + "self_attn.v_proj.weight", {Nkv * D, H});
    l.wo = r.read(p + "self_attn.o_proj.weight", {H, Nq * D});
    l.bq = r.read_optional(p + "self_attn.q_proj.bias", {Nq * D}, c.attention_bias);
    l.bk = r.read_optional(p + "self_attn.k_proj.bias", {Nkv * D}, c.attention_bias);
    l.bv = r.read_optional(p + "self_attn.v_proj.bias", {Nkv * D}, c.attention_bias);
    l.bo = r.read_optional(p + "self_attn.o_proj.bias", {H}, c.o_proj_bias);
    l.q_norm = r.read_optional(p + "self_attn.q_norm.weight", {D}, c.qk_norm);
    l.k_norm = r.read_optional(p + "self_attn.k_norm.weight", {D}, c.qk_norm);
    l.mlp_norm_w = r.read(p + "post_attention_layernorm.weight", {H});
    l.w_gate = r.read(p + "mlp.gate_proj.weight", {I, H});
    l.w_up = r.read(p + "mlp.up_proj.weight", {I, H});
    l.w_down = r.read(p + "mlp.down_proj.weight", {H, I});
    l.b_gate = r.read_optional(p + "mlp.gate_proj.bias", {I}, c.mlp_bias);
    l.b_up = r.read_optional(p + "mlp.up_proj.bias", {I}, c.mlp_bias);
    l.b_down = r.read_optional(p + "mlp.down_proj.bias", {H}, c.mlp_bias);
    w.layers.push_back(std::move(l));
  }
  w.final_norm_w = r.read("model.norm.weight", {H});
  if (!c.tie_embeddings && r.has("lm_head.weight")) {
    w.lm_head = r.read("lm_head.weight", {c.vocab_size, H});
  } else {
    w.lm_head = w.embed;
  }
  const std::vector<double> inv = rope_inverse_frequencies(c);
  w.rope_inv_freq = torch::tensor(inv, torch::TensorOptions().dtype(torch::kFloat64)).to(w.options.device());
}

void load_gpt2(const ModelConfig& c, TensorReader& r, ModelWeights& w) {
  const int64_t H = c.hidden, I = c.intermediate;
  const std::string root = r.has("transformer.wte.weight") ? "transformer." : "";
  w.embed = r.read(root + "wte.weight", {c.vocab_size, H});
  w.positions = r.read(root + "wpe.weight", {c.max_positions, H});
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = root + "h." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm_w = r.read(p + "ln_1.weight", {H});
    l.attn_norm_b = r.read(p + "ln_1.bias", {H});
    // Conv1D stores [in, out]; transpose to the [out, in] layout of ops::linear.
    const torch::Tensor qkv_w = r.read(p + "attn.c_attn.weight", {H, 3 * H}).t().contiguous();
    const torch::Tensor qkv_b = r.read(p + "attn.c_attn.bias", {3 * H});
    l.wq = qkv_w.narrow(0, 0, H).contiguous();
    l.wk = qkv_w.narrow(0, H, H).contiguous();
    l.wv = qkv_w.narrow(0, 2 * H, H).contiguous();
    l.bq = qkv_b.narrow(0, 0, H).contiguous();
    l.bk = qkv_b.narrow(0, H, H).contiguous();
    l.bv = qkv_b.narrow(0, 2 * H, H).contiguous();
    l.wo = r.read(p + "attn.c_proj.weight", {H, H}).t().contiguous();
    l.bo = r.read(p + "attn.c_proj.bias", {H});
    l.mlp_norm_w = r.read(p + "ln_2.weight", {H});
    l.mlp_norm_b = r.read(p + "ln_2.bias", {H});
    l.w_up = r.read(p + "mlp.c_fc.weight", {H, I}).t().contiguous();
    l.b_up = r.read(p + "mlp.c_fc.bias", {I});
    l.w_down = r.read(p + "mlp.c_proj.weight", {I, H}).t().contiguous();
    l.b_down = r.read(p + "mlp.c_proj.bias", {H});
    w.layers.push_back(std::move(l));
  }
  w.final_norm_w = r.read(root + "ln_f.weight", {H});
  w.final_norm_b = r.read(root + "ln_f.bias", {H});
  if (!c.tie_embeddings && r.has("lm_head.weight")) {
    w.lm_head = r.read("lm_head.weight", {c.vocab_size, H});
  } else {
    w.lm_head = w.embed;
  }
}

}  // namespace

ModelWeights load_model_weights(const std::string& dir, const ModelConfig& config,
                                const torch::TensorOptions& options, bool progress, std::string& fingerprint) {
  const WeightSet weights = WeightSet::open(dir);
  fingerprint = compute_weights_fingerprint((std::filesystem::path(dir) / "config.json").string(), weights);
  ModelWeights out;
  out.options = options;
  TensorReader reader(dir, weights, options, progress);
  if (config.family == ArchFamily::kGpt2) {
    load_gpt2(config, reader, out);
  } else {
    load_llama_family(config, reader, out);
  }
  return out;
}

}  // namespace reprox::engine
