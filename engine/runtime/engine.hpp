// The embedded engine: one model, its tokenizer and chat template, and a
// generation thread that takes jobs from a bounded queue.
//
// Threading: submit() may be called from any thread; generation runs on the
// engine's own thread, which is the only one that touches the model and the
// KV caches. Sink calls come from that thread. Requests run together by
// continuous batching (batch_runner.hpp); in strict mode an answer's bits
// never depend on what else shares the batch.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/kv/kv_cache_manager.hpp"
#include "engine/runtime/batch_runner.hpp"
#include "engine/runtime/engine_job.hpp"
#include "engine/runtime/prompt_builder.hpp"
#include "engine/scheduler/request_queue.hpp"

namespace reprox::engine {

class Model;
class KvReuse;

struct EngineOptions {
  std::string model_dir;
  std::string device = "cpu";
  int threads = 1;                  // intra-op threads for the forward pass
  std::string numeric_mode = "strict";  // "strict" (batch-invariant kernels) or "fast" (libtorch; no
                                        // KV reuse, whole-prompt prefill, no exactness promise under load)
  // Strict mode's weight storage: auto | f32 | f16 | bf16 | q8 (LoadOptions::weights).
  std::string weights = "auto";
  // Compute dtype: float32, bfloat16 or float16 (LoadOptions::dtype); 16-bit
  // needs numeric_mode "fast". Part of system_fingerprint.
  std::string dtype = "float32";
  int64_t default_max_tokens = 256;
  size_t queue_capacity = 64;       // beyond: 429
  // The most queued jobs one tenant may hold (0: the whole queue); queued
  // jobs are taken round-robin across tenants either way.
  size_t tenant_queue_limit = 0;
  int64_t kv_budget_bytes = 0;      // KV kept for conversation reuse (per tenant, whole blocks); 0 = off
  int32_t kv_block_size = 16;       // tokens per KV block (reuse granularity and working-memory unit)
  int32_t max_conversations_per_user = 10;  // conversations one tenant keeps in the reuse cache
  int32_t max_batch_size = 16;      // sequences (choices) per model pass
  int64_t max_step_tokens = 512;    // tokens per model pass: prefill chunk tokens + one per decode
  int64_t prefill_chunk = 256;      // most prompt tokens of one sequence per pass
  int64_t working_kv_bytes = 1ll << 30;  // KV of running sequences; beyond it the latest is preempted
  // Fast mode: the running sequences' KV in slots (Model::reserve_kv_slots),
  // one per sequence of a pass, as long as working_kv_bytes allows: "auto"
  // (on a GPU), "on" (also on the CPU, where it is the GPU's code path run
  // eagerly) or "off". Part of system_fingerprint.
  std::string kv_slots = "auto";
  // With KV slots: decode steps at fixed shapes (Model::set_static_decode),
  // recorded as CUDA graphs on a CUDA device where the build has them; on
  // the CPU run eagerly. Part of system_fingerprint.
  bool cuda_graphs = true;
};

class Engine {
 public:
  explicit Engine(EngineOptions options);  // loads the model; throws naming the problem
  ~Engine();

  // Clips job.max_tokens to the room the prompt leaves in the context
  // window, then queues the job. Refusals: kInvalidSampling (sampling
  // parameters out of range, a logit_bias or stop_token_ids id past
  // vocab_size() included), kContextExceeded (no room at all), kTooLarge
  // (the job alone needs more KV working memory than the engine has),
  // kQueueFull (retry later).
  std::optional<EngineError> submit(EngineJob job);

  const std::string& model_id() const { return model_id_; }
  const std::string& system_fingerprint() const { return fingerprint_; }
  const PromptBuilder& prompts() const { return *prompts_; }
  const std::shared_ptr<const tok::Tokenizer>& tokenizer() const { return tokenizer_; }
  int64_t max_positions() const;
  // Token ids the sampler draws from, [0, vocab_size()): the ids both the
  // model's logits and the tokenizer have.
  int32_t vocab_size() const;
  // The model's sliding window when it capped the context (max_positions()
  // is then this window), else 0.
  int64_t sliding_window() const;
  // The model's weights as held for compute (Model::weight_bytes()).
  size_t weight_bytes() const;
  const EngineOptions& options() const { return options_; }
  // The KV reuse cache's counters as of the last finished job (all zero
  // when reuse is off). Any thread.
  kv::KvCounters kv_counters() const;
  // The batch runner's counters as of its last step. Any thread.
  BatchStats batch_stats() const;

 private:
  void loop();
  void reserve_kv_slots();
  void publish_kv_counters();

  EngineOptions options_;
  std::unique_ptr<Model> model_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  std::unique_ptr<PromptBuilder> prompts_;
  std::vector<int32_t> stop_ids_;
  std::string model_id_;
  std::string fingerprint_;
  std::unique_ptr<KvReuse> kv_reuse_;  // null when kv_budget_bytes is 0; engine thread only

  mutable std::mutex kv_counters_mutex_;  // guards kv_counters_ and batch_stats_
  kv::KvCounters kv_counters_;  // published copy of kv_reuse_->counters()
  BatchStats batch_stats_;      // published copy of runner_->stats()

  int32_t working_blocks_ = 0;
  std::unique_ptr<BatchRunner> runner_;  // engine thread only
  std::atomic<sched::RequestId> next_request_id_{1};
  struct TenantOf {
    std::string_view operator()(const EngineJob& job) const { return job.tenant; }
  };
  sched::RequestQueue<EngineJob, TenantOf> queue_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// "fp_" + 16 hex of SHA-256 over the weights' hash, the engine build, its
// numeric mode (Model::numeric_mode_id()), compute dtype, device and weight
// storage (Model::weights_mode(): "f16", "bf16" and "q8" enter the hash as
// "|weights=<mode>:<kernels' id of that widening>"; "f32" and "" (fast mode)
// add nothing, so fp32 fingerprints are what they were); exposed for tests.
std::string make_system_fingerprint(const std::string& weights_fingerprint, const std::string& dtype,
                                    const std::string& device, const std::string& numeric_mode_id = "strict",
                                    const std::string& weights_mode = "");

}  // namespace reprox::engine
