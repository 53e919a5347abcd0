#include "model.hpp"

#include <stdexcept>

#include <torch/torch.h>

#include "model_weights.hpp"
#include "ops.hpp"

namespace reprox::engine {
namespace {

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("device '" + name + "' requested but CUDA is not available in this libtorch build/host");
    }
    return torch::Device(name);
  }
  throw std::runtime_error("unsupported device '" + name + "' (supported: cpu, cuda, cuda:N)");
}

torch::ScalarType parse_compute_dtype(const std::string& name) {
  if (name == "float32" || name == "fp32" || name == "f32") return torch::kFloat32;
  if (name == "float16" || name == "fp16" || name == "f16") return torch::kFloat16;
  if (name == "bfloat16" || name == "bf16") return torch::kBFloat16;
  throw std::runtime_error("unsupported compute dtype '" + name + "' (supported: float32, float16, bfloat16)");
}

const char* canonical_dtype_name(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat16: return "float16";
    case torch::kBFloat16: return "bfloat16";
    default: return "float32";
  }
}

// One transformer block of the llama family; x [T, H] -> [T, H]. Writes this
// layer's keys/values at cache positions start..start+T-1.
torch::Tensor llama_block(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                          const torch::Tensor& cos, const torch::Tensor& sin, torch::Tensor& k_cache,
                          torch::Tensor& v_cache, int64_t start) {
  const int64_t t = x.size(0);
  const torch::Tensor h = ops::rms_norm(x, l.attn_norm_w, c.norm_eps);
  torch::Tensor q = ops::linear(h, l.wq, l.bq).view({t, c.n_heads, c.head_dim});
  torch::Tensor k = ops::linear(h, l.wk, l.bk).view({t, c.n_kv_heads, c.head_dim});
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({t, c.n_kv_heads, c.head_dim});
  if (c.qk_norm) {
    q = ops::rms_norm(q, l.q_norm, c.norm_eps);
    k = ops::rms_norm(k, l.k_norm, c.norm_eps);
  }
  q = ops::apply_rope(q.transpose(0, 1), cos, sin);  // [Nq, T, D]
  k = ops::apply_rope(k.transpose(0, 1), cos, sin);  // [Nkv, T, D]
  k_cache.narrow(1, start, t).copy_(k);
  v_cache.narrow(1, start, t).copy_(v.transpose(0, 1));
  const torch::Tensor attn = ops::causal_attention(q, k_cache.narrow(1, 0, start + t),
                                                   v_cache.narrow(1, 0, start + t), start);
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);
  const torch::Tensor h2 = ops::rms_norm(x1, l.mlp_norm_w, c.norm_eps);
  const torch::Tensor mlp = ops::silu_mul(ops::linear(h2, l.w_gate, l.b_gate), ops::linear(h2, l.w_up, l.b_up));
  return x1 + ops::linear(mlp, l.w_down, l.b_down);
}

// One GPT-2 block; x [T, H] -> [T, H].
torch::Tensor gpt2_block(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                         torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start) {
  const int64_t t = x.size(0);
  const torch::Tensor h = ops::layer_norm(x, l.attn_norm_w, l.attn_norm_b, c.norm_eps);
  const torch::Tensor q = ops::linear(h, l.wq, l.bq).view({t, c.n_heads, c.head_dim}).transpose(0, 1);
  const torch::Tensor k = ops::linear(h, l.wk, l.bk).view({t, c.n_kv_heads, c.head_dim}).transpose(0, 1);
  const torch::Tensor v = ops::linear(h, l.wv, l.bv).view({t, c.n_kv_heads, c.head_dim}).transpose(0, 1);
  k_cache.narrow(1, start, t).copy_(k);
  v_cache.narrow(1, start, t).copy_(v);
  const torch::Tensor attn = ops::causal_attention(q, k_cache.narrow(1, 0, start + t),
                                                   v_cache.narrow(1, 0, start + t), start);
  const torch::Tensor x1 = x + ops::linear(attn, l.wo, l.bo);
  const torch::Tensor h2 = ops::layer_norm(x1, l.mlp_norm_w, l.mlp_norm_b, c.norm_eps);
  return x1 + ops::linear(ops::gelu_tanh(ops::linear(h2, l.w_up, l.b_up)), l.w_down, l.b_down);
}

}  // namespace

Model::Model() = default;
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& dir, const LoadOptions& options) {
  std::unique_ptr<Model> model(new Model());
  model->config_ = load_model_config(dir);
  const torch::Device device = parse_device(options.device);
  const torch::ScalarType dtype = parse_compute_dtype(options.dtype);
  if (options.threads > 0) torch::set_num_threads(options.threads);
  model->dtype_name_ = canonical_dtype_name(dtype);
  model->device_name_ = device.str();
  c10::InferenceMode guard;
  model->weights_ = std::make_unique<ModelWeights>(load_model_weights(
      dir, model->config_, torch::TensorOptions().dtype(dtype).device(device), options.progress,
      model->fingerprint_));
  size_t bytes = 0;
  const auto count = [&bytes](const torch::Tensor& t) {
    if (t.defined()) bytes += static_cast<size_t>(t.numel()) * t.element_size();
  };
  const ModelWeights& w = *model->weights_;
  count(w.embed);
  count(w.positions);
  count(w.final_norm_w);
  count(w.final_norm_b);
  if (!w.lm_head.is_same(w.embed)) count(w.lm_head);
  for (const LayerWeights& l : w.layers) {
    for (const torch::Tensor* t : {&l.attn_norm_w, &l.attn_norm_b, &l.wq, &l.bq, &l.wk, &l.bk, &l.wv, &l.bv, &l.wo,
                                   &l.bo, &l.q_norm, &l.k_norm, &l.mlp_norm_w, &l.mlp_norm_b, &l.w_gate, &l.b_gate,
                                   &l.w_up, &l.b_up, &l.w_down, &l.b_down}) {
      count(*t);
    }
  }
  model->weight_bytes_ = bytes;
  return model;
}

KvCache Model::new_cache(int64_t initial_capacity) const {
  KvCache kv;
  const int64_t capacity = std::max<int64_t>(1, std::min(initial_capacity, config_.max_positions));
  c10::InferenceMode guard;
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    kv.k.push_back(torch::zeros({config_.n_kv_heads, capacity, config_.head_dim}, weights_->options));
    kv.v.push_back(torch::zeros({config_.n_kv_heads, capacity, config_.head_dim}, weights_->options));
  }
  return kv;
}

void Model::ensure_capacity(KvCache& kv, int64_t needed) const {
  if (kv.k.size() != static_cast<size_t>(config_.n_layers)) kv = new_cache(needed);
  if (kv.capacity() >= needed) return;
  const int64_t capacity = std::min(std::max(needed, 2 * kv.capacity()), config_.max_positions);
  for (size_t i = 0; i < kv.k.size(); ++i) {
    for (torch::Tensor* t : {&kv.k[i], &kv.v[i]}) {
      torch::Tensor grown = torch::zeros({config_.n_kv_heads, capacity, config_.head_dim}, weights_->options);
      grown.narrow(1, 0, kv.length).copy_(t->narrow(1, 0, kv.length));
      *t = grown;
    }
  }
}

torch::Tensor Model::forward(const std::vector<int32_t>& tokens, KvCache& kv, bool all_logits,
                             std::string* error) const {
  const auto fail = [error](const std::string& why) {
    if (error != nullptr) *error = why;
    return torch::Tensor();
  };
  if (tokens.empty()) return fail("no tokens");
  for (int32_t id : tokens) {
    if (id < 0 || id >= config_.vocab_size) return fail("token id " + std::to_string(id) + " outside the vocabulary");
  }
  const int64_t t = static_cast<int64_t>(tokens.size());
  const int64_t start = kv.length;
  if (start + t > config_.max_positions) {
    return fail("sequence of " + std::to_string(start + t) + " tokens exceeds max_positions " +
                std::to_string(config_.max_positions));
  }
  c10::InferenceMode guard;
  ensure_capacity(kv, start + t);
  const ModelWeights& w = *weights_;
  const torch::Device device = w.options.device();
  const torch::Tensor ids =
      torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), torch::TensorOptions().dtype(torch::kLong))
          .to(device);
  torch::Tensor x = w.embed.index_select(0, ids);  // [T, H]

  if (config_.family == ArchFamily::kGpt2) {
    const torch::Tensor pos = torch::arange(start, start + t, torch::TensorOptions().dtype(torch::kLong).device(device));
    x = x + w.positions.index_select(0, pos);
    for (size_t i = 0; i < w.layers.size(); ++i) x = gpt2_block(config_, w.layers[i], x, kv.k[i], kv.v[i], start);
    x = ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps);
  } else {
    // RoPE angles in float64, then cast: [T, D/2].
    const torch::Tensor pos =
        torch::arange(start, start + t, torch::TensorOptions().dtype(torch::kFloat64).device(device)).unsqueeze(1);
    const torch::Tensor angles = pos * w.rope_inv_freq.unsqueeze(0);
    const torch::Tensor cos = angles.cos().to(w.options.dtype()).unsqueeze(0);  // [1, T, D/2]
    const torch::Tensor sin = angles.sin().to(w.options.dtype()).unsqueeze(0);
    for (size_t i = 0; i < w.layers.size(); ++i) {
      x = llama_block(config_, w.layers[i], x, cos, sin, kv.k[i], kv.v[i], start);
    }
    x = ops::rms_norm(x, w.final_norm_w, config_.norm_eps);
  }
  kv.length = start + t;
  if (!all_logits) x = x.narrow(0, t - 1, 1);
  torch::Tensor logits = ops::linear(x, w.lm_head, torch::Tensor()).to(torch::kFloat32).to(torch::kCPU);
  return all_logits ? logits.contiguous() : logits.view({config_.vocab_size}).contiguous();
}

}  // namespace reprox::engine
