#pragma once
// A causal language model loaded from a Hugging Face folder, run on one
// sequence or on a batch of them. Two numeric modes: "strict" (default) runs every linear,
// norm, activation, RoPE and attention on reprox::kernels, whose results for
// a token do not depend on the other tokens of the call or on the KV cache
// capacity, so cached decoding and chunked prefill are bitwise equal to a
// full recompute; "fast" runs libtorch's own kernels (any dtype, CUDA).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "engine/model/model_config.hpp"

namespace reprox::engine {

struct LoadOptions {
  std::string device = "cpu";     // "cpu" or "cuda" / "cuda:N"; cuda throws if unavailable
  std::string dtype = "float32";  // compute dtype: float32, float16 or bfloat16
  int threads = 0;                // strict kernel threads, and torch intra-op threads in fast mode (both
                                  // process-wide; strict mode sets torch to 1); 0 keeps the current settings
  std::string numeric_mode = "strict";  // "strict" (fp32 CPU only) or "fast" (libtorch)
  // Strict mode's weight-matrix storage (projections, embedding, lm_head):
  // "auto" keeps the checkpoint's dtype (F32, F16 or BF16), "f32" / "f16" /
  // "bf16" convert to that, "q8" quantizes at load (blocks of 32, fp32
  // scales; kernels.hpp). Compute stays fp32. Fast mode takes "auto" only
  // (its weights are in the compute dtype).
  std::string weights = "auto";
  bool progress = true;           // print load progress on stderr for models over ~100 MB
};

struct KvSlot;  // kv_arena.hpp

// The keys and values of one sequence. Grown by Model::forward; reset by
// setting length to 0 (or truncate to keep a prefix).
struct KvCache {
  std::vector<torch::Tensor> k;  // per layer: [n_kv_heads, capacity, head_dim]
  std::vector<torch::Tensor> v;  // per layer: [n_kv_heads, capacity, head_dim]
  int64_t length = 0;            // positions 0..length-1 are filled
  // Fast mode with reserved slots (Model::reserve_kv_slots): the slot whose
  // views k and v are; null for a cache of its own. Copies share the slot;
  // it returns to the arena when the last copy goes.
  std::shared_ptr<KvSlot> slot;

  int64_t capacity() const { return k.empty() ? 0 : k.front().size(1); }
  void truncate(int64_t new_length) { length = std::min(length, std::max<int64_t>(new_length, 0)); }
};

struct ModelWeights;  // defined in model_weights.hpp
struct FastWeights;   // defined in fast_weights.hpp
class KvArena;        // defined in kv_arena.hpp

// One sequence's part of a batched forward pass.
struct BatchInput {
  std::vector<int32_t> tokens;  // appended at positions kv->length..
  KvCache* kv = nullptr;        // distinct for every input of a call
  bool want_logits = true;      // return the logits of its last token
  // With want_logits, and when forward_batch is given `argmax`: only the
  // argmax of those logits is wanted (step_output.hpp: the lowest id of the
  // largest finite logit, -1 when none is finite), so only that leaves the
  // device.
  bool argmax_only = false;
};

namespace blocks {
struct Segment;
struct DecodeGroup;
}

class Model {
 public:
  // Reads config.json, generation_config.json and the safetensors weights in
  // `dir`. Throws std::runtime_error naming the missing file or tensor, a wrong
  // shape or an unsupported setting.
  static std::unique_ptr<Model> load(const std::string& dir, const LoadOptions& options = {});
  ~Model();

  const ModelConfig& config() const { return config_; }
  // Lowercase hex SHA-256 of config.json and all safetensors bytes (see weight_set.hpp).
  const std::string& weights_fingerprint() const { return fingerprint_; }
  const std::string& compute_dtype_name() const { return dtype_name_; }
  const std::string& device_name() const { return device_name_; }
  size_t weight_bytes() const { return weight_bytes_; }  // as stored (compute dtype, 16-bit or q8)
  // Strict mode: the matrices' storage, "f32", "f16", "bf16" or "q8" (the
  // resolved LoadOptions::weights); fast mode: "" (the compute dtype).
  const std::string& weights_mode() const { return weights_mode_; }
  bool strict() const { return strict_; }
  // "strict" or "fast", as loaded.
  const char* numeric_mode() const { return strict_ ? "strict" : "fast"; }
  // Names the exact operation sequence, for system_fingerprint: the kernels'
  // numeric_mode_id() in strict mode, "fast-libtorch-fused" (the fused
  // operation sequence of fast_weights.hpp) otherwise, with "+kv-slots"
  // after reserve_kv_slots and "+fixed-shapes" while static_decode() (both
  // change a step's operations, so its bits), and on the CPU "+cpu-" and
  // libtorch_cpu_class() (libtorch's kernels differ by CPU class).
  std::string numeric_mode_id() const;

  // An empty cache with room for `initial_capacity` positions (grows on
  // demand). With reserved slots, a free slot when one is left and the
  // capacity fits it (its capacity is then the slot's).
  KvCache new_cache(int64_t initial_capacity = 256) const;

  // A cache of its own holding `from`'s positions [0, from.length), made
  // like new_cache(max(capacity, from.length)): a slot of its own when one
  // is free and fits, else tensors of that capacity. Only the filled
  // positions are copied, whatever `from`'s capacity (a slot's is the
  // whole slot). `from` is left as it was.
  KvCache copy_cache(const KvCache& from, int64_t capacity) const;

  // Fast mode: keeps `slots` caches of `tokens` positions each in one
  // tensor per layer (kv_arena.hpp), allocated now, so that a step of
  // decode rows of sequences in slots writes and reads their keys and
  // values with a few operations whatever their number. A cache that
  // outgrows its slot moves to tensors of its own. Call before any
  // forward; throws in strict mode.
  void reserve_kv_slots(int64_t slots, int64_t tokens);
  // Slots not taken (0 without reserved slots).
  size_t free_kv_slots() const;
  // With slots: a step of decode rows only, every one in a slot and
  // wanting logits, runs at a fixed shape: the batch rounded up to a power
  // of two (padding rows write to the arena's scratch slot) and the keys
  // gathered up to a power of two of positions (at least 16, at most the
  // slots' length). On a CUDA device each shape is recorded once as a CUDA
  // graph and replayed (one launch instead of hundreds); that is the
  // default there when the build has CUDA graphs (cuda_graph.hpp). On the
  // CPU the same fixed-shape step runs eagerly, for tests. The bits of such
  // a step depend on its rows, their lengths and the two rounded sizes.
  void set_static_decode(bool on);
  bool static_decode() const { return static_decode_; }
  // Whether fixed-shape steps are recorded as CUDA graphs: on by
  // reserve_kv_slots on a CUDA device where the build has graphs. A
  // recording that fails turns recording off for good: its step and every
  // later one run eagerly (the same operations, so the same bits), and
  // graph_failure() says why (also written once to stderr).
  void set_record_graphs(bool on);
  bool record_graphs() const;
  std::string graph_failure() const;

  // Appends `tokens` at positions kv.length.. and advances kv.length.
  // Returns fp32 logits on the CPU: [vocab] for the last token, or
  // [tokens.size(), vocab] when all_logits. On invalid input (empty tokens, an
  // id outside the vocabulary, past max_positions) returns an undefined tensor,
  // leaves kv unchanged and, when `error` is given, says why. Not thread-safe per cache;
  // concurrent calls with distinct caches are safe.
  torch::Tensor forward(const std::vector<int32_t>& tokens, KvCache& kv, bool all_logits = false,
                        std::string* error = nullptr) const;

  // Runs several sequences in one pass (continuous batching): each input's
  // tokens are appended to its own cache as forward() would. Returns fp32 CPU
  // logits [inputs with want_logits, vocab], in input order. The norms,
  // projections and the MLP run once over the rows of all inputs (cache writes
  // and attention per input; in fast mode, for the single decode rows of
  // caches in KV slots at once). In strict mode every row's result is
  // bitwise the one forward() gives for that sequence alone (the kernels are
  // batch-invariant). In fast mode it is close to that, not bitwise (libtorch
  // may round differently for another number of rows); the same batch
  // (inputs, lengths, positions, order) gives the same bits run to run, and a
  // batch of one input is bitwise forward(). On invalid input returns an
  // undefined tensor, changes no cache length and, when `error` is given,
  // says which input and why. With `argmax`, the inputs marked argmax_only
  // are left out of the returned logits and get their argmax in *argmax
  // instead, both in input order: over the first `argmax_columns` logits
  // (the ids a sampler draws from, which may be fewer than the model's
  // vocabulary), or all of them when 0.
  torch::Tensor forward_batch(const std::vector<BatchInput>& inputs, std::string* error = nullptr,
                              std::vector<int32_t>* argmax = nullptr, int64_t argmax_columns = 0) const;

 private:
  Model();
  void ensure_capacity(KvCache& kv, int64_t needed) const;
  // "" or why the input cannot run; grows its cache when it can.
  std::string prepare(const std::vector<int32_t>& tokens, KvCache& kv) const;
  // Runs the rows of every segment (ids: their tokens back to back) and
  // returns the logits [logit_rows, V] of the rows listed: on the model's
  // device in the compute dtype (strict mode: float32 on the CPU).
  torch::Tensor run(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                    const std::vector<int64_t>& logit_rows) const;
  torch::Tensor run_strict(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                           const std::vector<int64_t>& logit_rows) const;
  torch::Tensor run_fast(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                         const std::vector<int64_t>& logit_rows) const;
  // The rows of tokens [R] at positions pos [R] (on the device) through the
  // layers; logits [logit_rows, V] on the device, in the compute dtype.
  torch::Tensor fast_rows(const torch::Tensor& tokens, const torch::Tensor& pos,
                          std::vector<blocks::Segment>& segments, const blocks::DecodeGroup& group,
                          const std::vector<int64_t>& logit_rows) const;
  // The fixed-shape step of set_static_decode; logits [segments, V] on the device.
  torch::Tensor run_static_decode(std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                                  int64_t longest) const;
  struct StaticStep;
  // Records `st` as a CUDA graph of `body`; false (recording turned off,
  // graph_failure_ set) when that fails. static_mutex_ held.
  bool record_graph(StaticStep& st, const std::function<torch::Tensor()>& body) const;

  ModelConfig config_;
  std::unique_ptr<ModelWeights> weights_;
  std::unique_ptr<FastWeights> fast_;  // fast mode only: the layers, fused (weights_->layers is empty)
  std::shared_ptr<KvArena> arena_;     // fast mode, after reserve_kv_slots
  bool static_decode_ = false;
  mutable std::mutex static_mutex_;  // guards static_steps_, their buffers, the two below
  mutable bool record_graphs_ = false;
  mutable std::string graph_failure_;
  // By (batch, key positions): the fixed-shape step's inputs, output and graph.
  mutable std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StaticStep>> static_steps_;
  std::string fingerprint_;
  std::string dtype_name_;
  std::string device_name_;
  size_t weight_bytes_ = 0;
  std::string weights_mode_;
  bool strict_ = true;
};

}  // namespace reprox::engine
