#include "engine/model/model.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <tuple>

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include "engine/model/forward_blocks.hpp"
#include "engine/kernels/kernels.hpp"
#include "engine/model/fast_weights.hpp"
#include "engine/model/cuda_graph.hpp"
#include "engine/model/kv_arena.hpp"
#include "engine/model/libtorch_cpu_class.hpp"
#include "engine/model/model_weights.hpp"
#include "engine/model/step_layout.hpp"
#include "engine/model/step_output.hpp"
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

// Rows `rows` of t [N, ...], in that order: t itself when they are all of
// its rows in order, a view for one row (or none), else a gather on t's device.
torch::Tensor take_rows(const torch::Tensor& t, const std::vector<int64_t>& rows) {
  bool every_row_in_order = static_cast<int64_t>(rows.size()) == t.size(0);
  for (size_t i = 0; every_row_in_order && i < rows.size(); ++i) {
    every_row_in_order = rows[i] == static_cast<int64_t>(i);
  }
  if (every_row_in_order) return t;
  if (rows.empty()) return t.narrow(0, 0, 0);
  if (rows.size() == 1) return t.narrow(0, rows.front(), 1);
  return t.index_select(0, torch::tensor(rows, torch::TensorOptions().dtype(torch::kLong)).to(t.device()));
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

// The decode rows of a step as one group: row b of slots [B] and pos [B]
// (device tensors) in the arena's slots, keys gathered up to position len.
blocks::DecodeGroup decode_group(const KvArena& arena, const torch::Tensor& slots, const torch::Tensor& pos,
                                 int64_t len) {
  blocks::DecodeGroup group;
  group.arena = &arena;
  group.slots = slots;
  group.pos = pos;
  group.len = len;
  group.future = torch::arange(len, torch::TensorOptions().dtype(torch::kLong).device(pos.device()))
                     .gt(pos.unsqueeze(1))
                     .view({pos.size(0), 1, 1, len});  // [B, 1, 1, L]
  return group;
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
    at::set_num_threads(1);
  } else if (options.threads > 0) {
    at::set_num_threads(options.threads);
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
  if (model->strict_) {
    model->weights_mode_ = kernels::weight_type_name(model->weights_->matrix_type);
  } else {
    model->fast_ = std::make_unique<FastWeights>(fuse_fast_weights(*model->weights_, model->config_));
  }
  size_t bytes = 0;
  const auto count = [&bytes](const torch::Tensor& t) {
    if (t.defined()) bytes += static_cast<size_t>(t.numel()) * t.element_size();
  };
  const ModelWeights& w = *model->weights_;
  for (const torch::Tensor* t : {&w.embed, &w.positions, &w.final_norm_w, &w.final_norm_b}) count(*t);
  if (!w.lm_head.is_same(w.embed)) count(w.lm_head);
  for (const LayerWeights& l : w.layers) {
    for (const torch::Tensor* t : {&l.attn_norm_w, &l.attn_norm_b, &l.wq, &l.bq, &l.wk, &l.bk, &l.wv, &l.bv, &l.wo,
                                   &l.bo, &l.q_norm, &l.k_norm, &l.mlp_norm_w, &l.mlp_norm_b, &l.w_gate, &l.b_gate,
                                   &l.w_up, &l.b_up, &l.w_down, &l.b_down}) {
      count(*t);
    }
  }
  if (model->fast_) {  // the RoPE tables are not weights
    for (const FastLayer& l : model->fast_->layers) {
      for (const torch::Tensor* t : {&l.attn_norm_w, &l.attn_norm_b, &l.wqkv, &l.bqkv, &l.qk_norm, &l.wo, &l.bo,
                                     &l.mlp_norm_w, &l.mlp_norm_b, &l.w_gate_up, &l.b_gate_up, &l.w_down,
                                     &l.b_down}) {
        count(*t);
      }
    }
  }
  model->weight_bytes_ = bytes;
  return model;
}

KvCache Model::new_cache(int64_t initial_capacity) const {
  KvCache kv;
  const int64_t capacity = std::max<int64_t>(1, std::min(initial_capacity, config_.max_positions));
  c10::InferenceMode guard;
  if (arena_ && capacity <= arena_->tokens()) {
    if (std::shared_ptr<KvSlot> slot = arena_->acquire()) {
      for (int64_t i = 0; i < config_.n_layers; ++i) {
        kv.k.push_back(arena_->k(i).select(0, slot->index));  // [Nkv, tokens, D] views
        kv.v.push_back(arena_->v(i).select(0, slot->index));
      }
      kv.slot = std::move(slot);
      return kv;
    }
  }
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    kv.k.push_back(torch::zeros({config_.n_kv_heads, capacity, config_.head_dim}, weights_->options));
    kv.v.push_back(torch::zeros({config_.n_kv_heads, capacity, config_.head_dim}, weights_->options));
  }
  return kv;
}

KvCache Model::copy_cache(const KvCache& from, int64_t capacity) const {
  if (from.k.empty()) return KvCache{};
  KvCache kv = new_cache(std::max(capacity, from.length));
  c10::InferenceMode guard;
  for (size_t i = 0; i < kv.k.size(); ++i) {
    kv.k[i].narrow(1, 0, from.length).copy_(from.k[i].narrow(1, 0, from.length));
    kv.v[i].narrow(1, 0, from.length).copy_(from.v[i].narrow(1, 0, from.length));
  }
  kv.length = from.length;
  if (kv.slot) kv.slot->used = std::max(kv.slot->used, from.length);
  return kv;
}

void Model::reserve_kv_slots(int64_t slots, int64_t tokens) {
  if (strict_) throw std::runtime_error("KV slots are for numeric_mode 'fast'");
  if (slots < 1 || tokens < 1) throw std::runtime_error("KV slots need at least one slot of one position");
  arena_ = KvArena::create(config_.n_layers, slots, config_.n_kv_heads, std::min(tokens, config_.max_positions),
                           config_.head_dim, weights_->options);
  static_decode_ = weights_->options.device().is_cuda() && CudaGraph::available();
  set_record_graphs(static_decode_);
}

void Model::set_record_graphs(bool on) {
  std::lock_guard lock(static_mutex_);
  record_graphs_ = on;
}

bool Model::record_graphs() const {
  std::lock_guard lock(static_mutex_);
  return record_graphs_;
}

std::string Model::graph_failure() const {
  std::lock_guard lock(static_mutex_);
  return graph_failure_;
}

size_t Model::free_kv_slots() const { return arena_ ? arena_->free_slots() : 0; }

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
  kv.slot.reset();  // outgrew its slot: the values now live in tensors of their own
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

torch::Tensor Model::forward(const std::vector<int32_t>& tokens, KvCache& kv, bool all_logits,
                             std::string* error) const {
  c10::InferenceMode guard;
  if (std::string why = prepare(tokens, kv); !why.empty()) {
    if (error != nullptr) *error = why;
    return torch::Tensor();
  }
  const int64_t t = static_cast<int64_t>(tokens.size());
  std::vector<blocks::Segment> segments(1);
  segments[0].t = t;
  segments[0].start = kv.length;
  segments[0].kv = &kv;
  std::vector<int64_t> rows;
  for (int64_t i = all_logits ? 0 : t - 1; i < t; ++i) rows.push_back(i);
  const torch::Tensor logits = logits_to_host(run(segments, tokens, rows));  // [rows, V]
  kv.length += t;
  return all_logits ? logits : logits.view({config_.vocab_size});
}

torch::Tensor Model::forward_batch(const std::vector<BatchInput>& inputs, std::string* error,
                                  std::vector<int32_t>* argmax, int64_t argmax_columns) const {
  c10::InferenceMode guard;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string why = inputs[i].kv == nullptr ? "no KV cache" : prepare(inputs[i].tokens, *inputs[i].kv);
    if (!why.empty()) {
      if (error != nullptr) *error = "batch input " + std::to_string(i) + ": " + why;
      return torch::Tensor();
    }
  }
  if (inputs.empty()) return torch::empty({0, config_.vocab_size}, torch::TensorOptions().dtype(torch::kFloat32));
  // The rows of all inputs back to back; segment i holds input i's.
  std::vector<blocks::Segment> segments(inputs.size());
  std::vector<int32_t> ids;
  std::vector<int64_t> rows;  // the last row of each input that wants logits
  int64_t row = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    blocks::Segment& s = segments[i];
    s.row = row;
    s.t = static_cast<int64_t>(inputs[i].tokens.size());
    s.start = inputs[i].kv->length;
    s.kv = inputs[i].kv;
    ids.insert(ids.end(), inputs[i].tokens.begin(), inputs[i].tokens.end());
    row += s.t;
    if (inputs[i].want_logits) rows.push_back(row - 1);
  }
  const torch::Tensor logits = run(segments, ids, rows);  // [rows, V] on the device
  for (const BatchInput& in : inputs) in.kv->length += static_cast<int64_t>(in.tokens.size());
  if (argmax == nullptr) return logits_to_host(logits);
  // The rows whose draw is the argmax bring back only that; the rest, their logits.
  std::vector<int64_t> full, picked;  // indices into logits' rows
  for (const BatchInput& in : inputs) {
    if (in.want_logits) (in.argmax_only ? picked : full).push_back(static_cast<int64_t>(full.size() + picked.size()));
  }
  argmax->clear();
  if (!picked.empty()) {
    const int64_t columns = argmax_columns > 0 ? std::min(argmax_columns, logits.size(1)) : logits.size(1);
    const torch::Tensor ids_of = finite_argmax(take_rows(logits, picked).narrow(1, 0, columns)).to(torch::kCPU);
    const auto id = ids_of.accessor<int64_t, 1>();
    for (int64_t i = 0; i < id.size(0); ++i) argmax->push_back(static_cast<int32_t>(id[i]));
  }
  return logits_to_host(take_rows(logits, full));
}

torch::Tensor Model::run(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                         const std::vector<int64_t>& logit_rows) const {
  return strict_ ? run_strict(segments, ids, logit_rows) : run_fast(segments, ids, logit_rows);
}

torch::Tensor Model::run_fast(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                              const std::vector<int64_t>& logit_rows) const {
  const torch::Device device = weights_->options.device();
  const int64_t r = static_cast<int64_t>(ids.size());
  // A step of single decode rows, all in slots, may run at a fixed shape.
  bool decode_in_slots = arena_ != nullptr;
  int64_t longest = 0;
  for (const blocks::Segment& s : segments) {
    if (s.kv->slot) s.kv->slot->used = std::max(s.kv->slot->used, s.start + s.t);
    decode_in_slots = decode_in_slots && decodes_in_slot(s, arena_.get());
    longest = std::max(longest, s.start + s.t);
  }
  if (decode_in_slots && static_decode_ && static_cast<int64_t>(logit_rows.size()) == r) {
    return run_static_decode(segments, ids, longest);
  }
  // Decode rows in slots first, attending as one group; the rest per segment.
  StepLayout layout = lay_out_step(segments, ids, logit_rows, arena_.get());
  const int64_t grouped = static_cast<int64_t>(layout.grouped.size());
  // The token ids, positions and (grouped rows) slots of all rows:
  // [2 or 3, R], one copy to the device.
  torch::Tensor host = torch::zeros({grouped > 0 ? 3 : 2, r}, torch::TensorOptions().dtype(torch::kLong));
  auto cell = host.accessor<int64_t, 2>();
  for (int64_t i = 0; i < r; ++i) cell[0][i] = layout.ids[static_cast<size_t>(i)];
  for (const std::vector<blocks::Segment>* part : {&layout.grouped, &layout.rest}) {
    for (const blocks::Segment& s : *part) {
      for (int64_t j = 0; j < s.t; ++j) cell[1][s.row + j] = s.start + j;
    }
  }
  for (const blocks::Segment& s : layout.grouped) cell[2][s.row] = s.kv->slot->index;
  const torch::Tensor on_device = host.to(device);
  const blocks::DecodeGroup group =
      grouped > 0 ? decode_group(*arena_, on_device[2].narrow(0, 0, grouped), on_device[1].narrow(0, 0, grouped),
                                 layout.longest_grouped)
                  : blocks::DecodeGroup();
  if (layout.logit_rows.empty()) {
    fast_rows(on_device[0], on_device[1], layout.rest, group, layout.logit_rows);
    return torch::empty({0, config_.vocab_size}, torch::TensorOptions().dtype(torch::kFloat32));
  }
  return fast_rows(on_device[0], on_device[1], layout.rest, group, layout.logit_rows);
}

torch::Tensor Model::fast_rows(const torch::Tensor& tokens, const torch::Tensor& pos,
                               std::vector<blocks::Segment>& segments, const blocks::DecodeGroup& group,
                               const std::vector<int64_t>& logit_rows) const {
  const ModelWeights& w = *weights_;
  const bool gpt2 = config_.family == ArchFamily::kGpt2;
  torch::Tensor x = w.embed.index_select(0, tokens);  // [R, H]
  torch::Tensor cos, sin;                             // [R, 1, D]
  if (gpt2) {
    x = x + w.positions.index_select(0, pos);
  } else {
    cos = fast_->rope_cos.index_select(0, pos).unsqueeze(1);
    sin = fast_->rope_sin.index_select(0, pos).unsqueeze(1);
  }
  for (size_t i = 0; i < fast_->layers.size(); ++i) {
    x = gpt2 ? blocks::gpt2_fast_batch(config_, fast_->layers[i], x, segments, group, i)
             : blocks::llama_fast_batch(config_, fast_->layers[i], x, cos, sin, segments, group, i);
  }
  // Only the rows whose logits are wanted go through the final norm and lm_head.
  if (logit_rows.empty()) return torch::Tensor();
  x = take_rows(x, logit_rows);
  x = gpt2 ? ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps)
           : ops::rms_norm(x, w.final_norm_w, config_.norm_eps);  // [rows, H]
  return ops::linear(x, w.lm_head, torch::Tensor());  // [rows, V]
}

// One fixed shape of run_static_decode: its inputs [3, B] (token ids,
// positions, slots) on the device, and, on a CUDA device, the recorded step
// and its output logits [B, V].
struct Model::StaticStep {
  torch::Tensor inputs;
  torch::Tensor logits;
  std::unique_ptr<CudaGraph> graph;
};

void Model::set_static_decode(bool on) { static_decode_ = on && arena_ != nullptr; }

namespace {
int64_t power_of_two_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
}  // namespace

torch::Tensor Model::run_static_decode(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                                       int64_t longest) const {
  const int64_t rows = static_cast<int64_t>(segments.size());
  const int64_t batch = power_of_two_at_least(rows);
  const int64_t len = std::min(arena_->tokens(), power_of_two_at_least(std::max<int64_t>(longest, 16)));
  // Real rows first; padding rows read token 0 at position 0 of the scratch slot.
  torch::Tensor host = torch::zeros({3, batch}, torch::TensorOptions().dtype(torch::kLong));
  auto cell = host.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) cell[2][b] = arena_->scratch();
  for (int64_t b = 0; b < rows; ++b) {
    cell[0][b] = ids[static_cast<size_t>(b)];
    cell[1][b] = segments[static_cast<size_t>(b)].start;
    cell[2][b] = segments[static_cast<size_t>(b)].kv->slot->index;
  }
  std::lock_guard lock(static_mutex_);
  std::unique_ptr<StaticStep>& step = static_steps_[{batch, len}];
  const bool fresh = step == nullptr;
  if (fresh) {
    step = std::make_unique<StaticStep>();
    step->inputs = torch::zeros({3, batch}, torch::TensorOptions().dtype(torch::kLong).device(weights_->options.device()));
  }
  StaticStep& st = *step;
  const auto body = [this, &st, batch, len]() {
    const blocks::DecodeGroup group = decode_group(*arena_, st.inputs[2], st.inputs[1], len);
    std::vector<blocks::Segment> none;  // attention runs on the group
    std::vector<int64_t> all(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) all[static_cast<size_t>(b)] = b;
    return fast_rows(st.inputs[0], st.inputs[1], none, group, all);  // [B, V]
  };
  if (fresh && record_graphs_) {
    // The warm-up and the recording write only the scratch slot: every
    // input row points there until the real rows are copied in.
    torch::Tensor idle = torch::zeros({3, batch}, torch::TensorOptions().dtype(torch::kLong));
    idle[2].fill_(arena_->scratch());
    st.inputs.copy_(idle);
    record_graph(st, body);
  }
  st.inputs.copy_(host);
  if (!st.graph) return body().narrow(0, 0, rows);
  st.graph->replay();
  return st.logits.narrow(0, 0, rows).clone();  // the next replay overwrites st.logits
}

bool Model::record_graph(StaticStep& st, const std::function<torch::Tensor()>& body) const {
  auto graph = std::make_unique<CudaGraph>();
  try {
    if (!st.inputs.is_cuda()) throw std::runtime_error("the model is not on a CUDA device");
    st.logits = graph->capture(body);
  } catch (const std::exception& e) {
    record_graphs_ = false;
    graph_failure_ = e.what();
    std::cerr << "reprox: recording a CUDA graph failed; decode steps run eagerly from now on: " << graph_failure_
              << "\n";
    return false;
  }
  st.graph = std::move(graph);
  return true;
}

torch::Tensor Model::run_strict(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                                const std::vector<int64_t>& logit_rows) const {
  const ModelWeights& w = *weights_;
  // Any matrix storage: embedding rows widened to fp32 (exact; q8: scale * q).
  torch::Tensor x = strict_ops::embedding(w.embed, ids, config_.hidden);  // [R, H]
  if (config_.family == ArchFamily::kGpt2) {
    for (const blocks::Segment& s : segments) x.narrow(0, s.row, s.t).add_(w.positions.narrow(0, s.start, s.t));
    for (size_t i = 0; i < w.layers.size(); ++i) x = blocks::gpt2_strict(config_, w.layers[i], x, segments, i);
  } else {
    for (blocks::Segment& s : segments) {
      std::tie(s.cos, s.sin) = strict_ops::rope_tables(w.rope_inv_freq, s.start, s.t);  // [t, D/2] each
    }
    for (size_t i = 0; i < w.layers.size(); ++i) x = blocks::llama_strict(config_, w.layers[i], x, segments, i);
  }
  // Only the rows whose logits are wanted go through the final norm and lm_head.
  x = take_rows(x, logit_rows).contiguous();
  x = config_.family == ArchFamily::kGpt2
          ? strict_ops::layer_norm(x, w.final_norm_w, w.final_norm_b, config_.norm_eps)
          : strict_ops::rms_norm(x, w.final_norm_w, config_.norm_eps);
  return strict_ops::linear(x, w.lm_head, torch::Tensor());
}

std::string Model::numeric_mode_id() const {
  if (strict_) return kernels::numeric_mode_id();
  std::string id = "fast-libtorch-fused";
  if (ops::fused_rms_norm(weights_->options.device())) id += "+fused-norm";
  if (arena_) id += "+kv-slots";
  if (static_decode_) id += "+fixed-shapes";
  if (!weights_->options.device().is_cuda()) id += "+cpu-" + libtorch_cpu_class();
  return id;
}

}  // namespace reprox::engine
