#include "engine/model/model.hpp"

#include <stdexcept>
#include <tuple>

#include <torch/torch.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/kernels/kernels.hpp"
#include "engine/model/model_weights.hpp"
#include "engine/model/ops.hpp"
#include "engine/model/strict_ops.hpp"

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

// "strict" -> true, "fast" -> false; refuses strict where the kernels cannot run.
bool parse_numeric_mode(const std::string& mode, const torch::Device& device, torch::ScalarType dtype) {
  if (mode == "fast") return false;
  if (mode != "strict") {
    throw std::runtime_error("unsupported numeric_mode '" + mode + "' (supported: strict, fast)");
  }
  if (!device.is_cpu()) {
    throw std::runtime_error("numeric_mode 'strict' runs on the CPU only; device '" + device.str() +
                             "' needs numeric_mode 'fast'");
  }
  if (dtype != torch::kFloat32) {
    throw std::runtime_error(std::string("numeric_mode 'strict' computes in float32 only; dtype '") +
                             canonical_dtype_name(dtype) + "' needs numeric_mode 'fast'");
  }
  return true;
}

}  // namespace

Model::Model() = default;
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& dir, const LoadOptions& options) {
  std::unique_ptr<Model> model(new Model());
  model->config_ = load_model_config(dir);
  const torch::Device device = parse_device(options.device);
  const torch::ScalarType dtype = parse_compute_dtype(options.dtype);
  model->strict_ = parse_numeric_mode(options.numeric_mode, device, dtype);
  if (options.threads > 0) kernels::set_num_threads(options.threads);
  // Strict mode leaves torch only elementwise adds and copies (the same bits
  // on any thread count), so torch gets one thread: its OpenMP workers spin
  // after each parallel region and took a core from the kernel pool (a third
  // of the CPU time of a 2-thread prefill on 2 cores went to that spinning).
  if (model->strict_) {
    torch::set_num_threads(1);
  } else if (options.threads > 0) {
    torch::set_num_threads(options.threads);
  }
  if (!model->strict_ && options.weights != "auto") {
    throw std::runtime_error("weights '" + options.weights +
                             "' needs numeric_mode 'strict' (fast mode keeps the weights in its compute dtype)");
  }
  model->dtype_name_ = canonical_dtype_name(dtype);
  model->device_name_ = device.str();
  c10::InferenceMode guard;
  model->weights_ = std::make_unique<ModelWeights>(load_model_weights(
      dir, model->config_, torch::TensorOptions().dtype(dtype).device(device), options.progress,
      model->fingerprint_, model->strict_ ? options.weights : std::string()));
  if (model->strict_) model->weights_mode_ = kernels::weight_type_name(model->weights_->matrix_type);
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

std::string Model::prepare(const std::vector<int32_t>& tokens, KvCache& kv) const {
  if (tokens.empty()) return "no tokens";
  for (int32_t id : tokens) {
    if (id < 0 || id >= config_.vocab_size) return "token id " + std::to_string(id) + " outside the vocabulary";
  }
  const int64_t end = kv.length + static_cast<int64_t>(tokens.size());
  if (end > config_.max_positions) {
    return "sequence of " + std::to_string(end) + " tokens exceeds max_positions " +
           std::to_string(config_.max_positions);
  }
  ensure_capacity(kv, end);
  if (strict_) {
    // The kernels read the caches through raw pointers.
    for (size_t i = 0; i < kv.k.size(); ++i) {
      if (!kv.k[i].is_contiguous() || !kv.v[i].is_contiguous() || kv.k[i].scalar_type() != torch::kFloat32 ||
          kv.v[i].scalar_type() != torch::kFloat32 || !kv.k[i].is_cpu() || !kv.v[i].is_cpu()) {
        return "KV cache layer " + std::to_string(i) + " is not a contiguous float32 CPU tensor";
      }
    }
  }
  return "";
}

torch::Tensor Model::embed(const std::vector<int32_t>& tokens, int64_t start) const {
  const ModelWeights& w = *weights_;
  const torch::Device device = w.options.device();
  const int64_t t = static_cast<int64_t>(tokens.size());
  if (strict_) {  // any matrix storage: rows widened to fp32 (exact; q8: scale * q)
    torch::Tensor x = strict_ops::embedding(w.embed, tokens, config_.hidden);
    if (config_.family == ArchFamily::kGpt2) x.add_(w.positions.narrow(0, start, t));
    return x;
  }
  const torch::Tensor ids =
      torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), torch::TensorOptions().dtype(torch::kLong))
          .to(device);
  torch::Tensor x = w.embed.index_select(0, ids);  // [T, H]
  if (config_.family == ArchFamily::kGpt2) {
    const torch::Tensor pos = torch::arange(start, start + t, torch::TensorOptions().dtype(torch::kLong).device(device));
    x = x + w.positions.index_select(0, pos);
  }
  return x;
}

torch::Tensor Model::forward(const std::vector<int32_t>& tokens, KvCache& kv, bool all_logits,
                             std::string* error) const {
  c10::InferenceMode guard;
  if (std::string why = prepare(tokens, kv); !why.empty()) {
    if (error != nullptr) *error = why;
    return torch::Tensor();
  }
  const int64_t t = static_cast<int64_t>(tokens.size());
  const int64_t start = kv.length;
  torch::Tensor x = embed(tokens, start);
  torch::Tensor logits;
  if (strict_) {
    std::vector<blocks::Segment> segments(1);
    segments[0].t = t;
    segments[0].start = start;
    segments[0].kv = &kv;
    std::vector<int64_t> rows;
    for (int64_t i = all_logits ? 0 : t - 1; i < t; ++i) rows.push_back(i);
    logits = run_strict(std::move(x), segments, rows);
  } else {
    logits = run_fast(std::move(x), kv, start, all_logits);
  }
  kv.length = start + t;
  return all_logits ? logits.contiguous() : logits.view({config_.vocab_size}).contiguous();
}

torch::Tensor Model::forward_batch(const std::vector<BatchInput>& inputs, std::string* error) const {
  c10::InferenceMode guard;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string why = inputs[i].kv == nullptr ? "no KV cache" : prepare(inputs[i].tokens, *inputs[i].kv);
    if (!why.empty()) {
      if (error != nullptr) *error = "batch input " + std::to_string(i) + ": " + why;
      return torch::Tensor();
    }
  }
  if (inputs.empty()) return torch::empty({0, config_.vocab_size}, torch::TensorOptions().dtype(torch::kFloat32));
  // The rows of all inputs back to back: x [R, H]; segment i holds input i's.
  std::vector<blocks::Segment> segments(inputs.size());
  std::vector<torch::Tensor> xs;  // per input: [t, H]
  std::vector<int64_t> rows;      // the last row of each input that wants logits
  int64_t row = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    blocks::Segment& s = segments[i];
    s.row = row;
    s.t = static_cast<int64_t>(inputs[i].tokens.size());
    s.start = inputs[i].kv->length;
    s.kv = inputs[i].kv;
    xs.push_back(embed(inputs[i].tokens, s.start));
    row += s.t;
    if (inputs[i].want_logits) rows.push_back(row - 1);
  }
  torch::Tensor logits;  // [rows, V] fp32 CPU
  if (strict_) {
    logits = run_strict(torch::cat(xs, 0), segments, rows);
  } else if (inputs.size() == 1) {
    // One input runs exactly as forward() runs it.
    logits = run_fast(std::move(xs.front()), *inputs[0].kv, segments[0].start, false);
    if (rows.empty()) logits = logits.narrow(0, 0, 0);
  } else {
    logits = run_fast_batch(torch::cat(xs, 0), segments, rows);
  }
  for (const BatchInput& in : inputs) in.kv->length += static_cast<int64_t>(in.tokens.size());
  return logits;  // already one contiguous [rows, V]; a copy costs ~5% of a pass
}

// cos, sin [1, T, D/2] in the compute dtype for positions start..start+T-1
// (angles in float64, then cast).
std::pair<torch::Tensor, torch::Tensor> Model::fast_rope_tables(int64_t start, int64_t t) const {
  const ModelWeights& w = *weights_;
  const torch::Tensor pos =
      torch::arange(start, start + t, torch::TensorOptions().dtype(torch::kFloat64).device(w.options.device()))
          .unsqueeze(1);
  const torch::Tensor angles = pos * w.rope_inv_freq.unsqueeze(0);  // [T, D/2]
  return {angles.cos().to(w.options.dtype()).unsqueeze(0), angles.sin().to(w.options.dtype()).unsqueeze(0)};
}

torch::Tensor Model::run_fast(torch::Tensor x, KvCache& kv, int64_t start, bool all_logits) const {
  const ModelWeights& w = *weights_;
  const int64_t t = x.size(0);
  if (config_.family == ArchFamily::kGpt2) {
    for (size_t i = 0; i < w.layers.size(); ++i) x = blocks::gpt2_fast(config_, w.layers[i], x, kv.k[i], kv.v[i], start);
    x = ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps);
  } else {
    const auto [cos, sin] = fast_rope_tables(start, t);  // [1, T, D/2] each
    for (size_t i = 0; i < w.layers.size(); ++i) {
      x = blocks::llama_fast(config_, w.layers[i], x, cos, sin, kv.k[i], kv.v[i], start);
    }
    x = ops::rms_norm(x, w.final_norm_w, config_.norm_eps);
  }
  if (!all_logits) x = x.narrow(0, t - 1, 1);
  return ops::linear(x, w.lm_head, torch::Tensor()).to(torch::kFloat32).to(torch::kCPU);
}

torch::Tensor Model::run_fast_batch(torch::Tensor x, std::vector<blocks::Segment>& segments,
                                    const std::vector<int64_t>& logit_rows) const {
  const ModelWeights& w = *weights_;
  const bool gpt2 = config_.family == ArchFamily::kGpt2;
  if (!gpt2) {
    for (blocks::Segment& s : segments) std::tie(s.cos, s.sin) = fast_rope_tables(s.start, s.t);  // [1, t, D/2]
  }
  for (size_t i = 0; i < w.layers.size(); ++i) {  // x [R, H]
    x = gpt2 ? blocks::gpt2_fast_batch(config_, w.layers[i], x, segments, i)
             : blocks::llama_fast_batch(config_, w.layers[i], x, segments, i);
  }
  // Only the rows whose logits are wanted go through the final norm and lm_head.
  if (logit_rows.empty()) return torch::empty({0, config_.vocab_size}, torch::TensorOptions().dtype(torch::kFloat32));
  if (static_cast<int64_t>(logit_rows.size()) != x.size(0)) {
    x = x.index_select(0, torch::tensor(logit_rows, torch::TensorOptions().dtype(torch::kLong)).to(x.device()));
  }
  x = gpt2 ? ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps)
           : ops::rms_norm(x, w.final_norm_w, config_.norm_eps);  // [rows, H]
  return ops::linear(x, w.lm_head, torch::Tensor()).to(torch::kFloat32).to(torch::kCPU).contiguous();  // [rows, V]
}

torch::Tensor Model::run_strict(torch::Tensor x, std::vector<blocks::Segment>& segments,
                                const std::vector<int64_t>& logit_rows) const {
  const ModelWeights& w = *weights_;
  x = x.contiguous();
  if (config_.family == ArchFamily::kGpt2) {
    for (size_t i = 0; i < w.layers.size(); ++i) x = blocks::gpt2_strict(config_, w.layers[i], x, segments, i);
  } else {
    for (blocks::Segment& s : segments) {
      std::tie(s.cos, s.sin) = strict_ops::rope_tables(w.rope_inv_freq, s.start, s.t);  // [t, D/2] each
    }
    for (size_t i = 0; i < w.layers.size(); ++i) x = blocks::llama_strict(config_, w.layers[i], x, segments, i);
  }
  // Only the rows whose logits are wanted go through the final norm and lm_head.
  if (static_cast<int64_t>(logit_rows.size()) != x.size(0)) {
    x = x.index_select(0, torch::tensor(logit_rows, torch::TensorOptions().dtype(torch::kLong))).contiguous();
  }
  x = config_.family == ArchFamily::kGpt2
          ? strict_ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps)
          : strict_ops::rms_norm(x, w.final_norm_w, config_.norm_eps);
  return strict_ops::linear(x, w.lm_head, torch::Tensor());
}

std::string Model::numeric_mode_id() const {
  return strict_ ? std::string(kernels::numeric_mode_id()) : std::string("fast-libtorch");
}

}  // namespace reprox::engine
