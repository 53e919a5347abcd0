#include "engine/runtime/engine.hpp"

#include <openssl/sha.h>
#include <torch/types.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "engine/kernels/kernels.hpp"
#include "engine/model/model.hpp"
#include "engine/runtime/batch_runner.hpp"
#include "engine/runtime/kv_reuse.hpp"
#include "engine/sampling/sampling_params.hpp"
#include "engine/sampling/stop_token_ids.hpp"

namespace reprox::engine {

namespace {

// Bump when a change to the engine can change any output bit.
constexpr const char* kEngineBuild = "reprox-engine-1";

// Bytes of keys and values one token takes in every layer, at `element_bytes` each.
int64_t kv_bytes_per_token(const ModelConfig& c, int64_t element_bytes) {
  return 2 * c.n_layers * c.n_kv_heads * c.head_dim * element_bytes;
}

// Why `job`'s guide cannot be honoured, if it cannot.
std::optional<std::string> guide_conflict(const EngineJob& job) {
  const GuideSpec& g = job.guide;
  if (g.kind == GuideSpec::Kind::kNone) return std::nullopt;
  if (g.kind == GuideSpec::Kind::kChoice && g.choices.empty()) return "guided_choice needs at least one choice";
  if (g.kind == GuideSpec::Kind::kJsonSchema && !g.schema) return "a json_schema guide needs its compiled schema";
  if (job.sampling.min_tokens > 0) return "min_tokens cannot be combined with guided decoding";
  if (!job.sampling.allowed_ids.empty())  // they could leave nothing the guide allows
    return "allowed_token_ids cannot be combined with guided decoding";
  if (job.ignore_eos && job.stop_token_ids.empty())
    return "ignore_eos cannot be combined with guided decoding: nothing could end the answer";
  return std::nullopt;
}

std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}

// The weight widening each storage mode adds to the operation sequence.
std::string weights_material(const std::string& mode) {
  if (mode.empty() || mode == "f32") return "";
  if (mode == "q8") return "|weights=q8:" + std::string(kernels::weights_mode_id(kernels::WeightType::kQ8));
  if (mode == "bf16") return "|weights=bf16:" + std::string(kernels::weights_mode_id(kernels::WeightType::kBF16));
  if (mode == "f16") return "|weights=f16:" + std::string(kernels::weights_mode_id(kernels::WeightType::kF16));
  return "|weights=" + mode;
}

}  // namespace

std::string make_system_fingerprint(const std::string& weights_fingerprint, const std::string& dtype,
                                    const std::string& device, const std::string& numeric_mode_id,
                                    const std::string& weights_mode) {
  std::string material = std::string("weights=") + weights_fingerprint + "|engine=" + kEngineBuild +
                         "|mode=" + numeric_mode_id + "|dtype=" + dtype + "|device=" + device +
                         weights_material(weights_mode);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest);
  return "fp_" + hex(digest, 8);
}

Engine::Engine(EngineOptions options) : options_(std::move(options)), queue_(std::max<size_t>(options_.queue_capacity, 1), options_.tenant_queue_limit) {
  LoadOptions lo;
  lo.device = options_.device;
  lo.threads = options_.threads;
  lo.numeric_mode = options_.numeric_mode;
  lo.weights = options_.weights;
  lo.dtype = options_.dtype;
  model_ = Model::load(options_.model_dir, lo);
  reserve_kv_slots();
  tokenizer_ = tok::Tokenizer::load_dir(options_.model_dir);
  prompts_ = std::make_unique<PromptBuilder>(options_.model_dir, tokenizer_);
  // The chat template's eos (e.g. <|im_end|>) ends a turn even when
  // generation_config lists another id.
  std::optional<int32_t> tokenizer_eos;
  if (!prompts_->eos_token().empty()) tokenizer_eos = tokenizer_->token_to_id(prompts_->eos_token());
  stop_ids_ = StopTokenIds::from_model(model_->config().eos_ids, tokenizer_eos).ids();
  model_id_ = std::filesystem::path(options_.model_dir).lexically_normal().filename().string();
  if (model_id_.empty()) model_id_ = std::filesystem::path(options_.model_dir).lexically_normal().parent_path().filename().string();
  fingerprint_ = make_system_fingerprint(model_->weights_fingerprint(), model_->compute_dtype_name(),
                                         model_->device_name(), model_->numeric_mode_id(), model_->weights_mode());
  sched::SchedulerConfig sc;
  sc.block_size = options_.kv_block_size;
  sc.max_batch_size = options_.max_batch_size;
  sc.max_tokens_per_step = options_.max_step_tokens;
  sc.chunk_size = options_.prefill_chunk;
  sc.forks_copy_prompt = true;  // BatchRunner::fork copies the primary's cache
  if (std::string why = sched::validate_scheduler_config(sc); !why.empty()) throw std::runtime_error(why);
  if (!model_->strict()) {
    // libtorch's kernels give a token different low-order bits depending on
    // how many rows its prefill had, so the fast mode never splits a prompt
    // by load (chunk and step budget cover any batch of whole prompts) and
    // never reuses KV across requests.
    sc.chunk_size = model_->config().max_positions;
    sc.max_tokens_per_step = model_->config().max_positions * std::max(options_.max_batch_size, 1);
    options_.kv_budget_bytes = 0;
  }
  if (options_.kv_budget_bytes > 0) {
    KvReuseOptions ro;
    ro.budget_bytes = options_.kv_budget_bytes;
    ro.block_size = options_.kv_block_size;
    ro.max_conversations_per_tenant = options_.max_conversations_per_user;
    kv_reuse_ = std::make_unique<KvReuse>(model_->new_cache(1), ro);
    if (!kv_reuse_->enabled()) kv_reuse_.reset();  // budget under one block
  }
  // Working memory in blocks; always room for one request of the full context.
  const ModelConfig& mc = model_->config();
  const int64_t bytes_per_block = kv_bytes_per_token(mc, sizeof(float)) * options_.kv_block_size;
  working_blocks_ = static_cast<int32_t>(std::clamp<int64_t>(
      options_.working_kv_bytes / bytes_per_block, sched::blocks_for_tokens(mc.max_positions, options_.kv_block_size),
      int64_t{1} << 30));
  BatchConfig bc;
  bc.schedule = sc;
  bc.working_blocks = working_blocks_;
  runner_ = std::make_unique<BatchRunner>(*model_, tokenizer_, stop_ids_, fingerprint_, kv_reuse_.get(), bc,
                                          [this] { publish_kv_counters(); });
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  stopping_ = true;
  queue_.close();
  thread_.join();
}

void Engine::publish_kv_counters() {
  if (!kv_reuse_) return;
  std::lock_guard lock(kv_counters_mutex_);
  kv_counters_ = kv_reuse_->counters();
}

kv::KvCounters Engine::kv_counters() const {
  std::lock_guard lock(kv_counters_mutex_);
  return kv_counters_;
}

BatchStats Engine::batch_stats() const {
  std::lock_guard lock(kv_counters_mutex_);
  return batch_stats_;
}

int64_t Engine::max_positions() const { return model_->config().max_positions; }
int64_t Engine::sliding_window() const { return model_->config().sliding_window; }
size_t Engine::weight_bytes() const { return model_->weight_bytes(); }

int32_t Engine::vocab_size() const { return runner_->vocab_size(); }

std::optional<EngineError> Engine::submit(EngineJob job) {
  if (std::string why = validate_sampling_params(job.sampling, vocab_size()); !why.empty())
    return EngineError{EngineErrc::kInvalidSampling, why};
  for (const int32_t id : job.stop_token_ids) {
    if (id < 0 || id >= vocab_size())
      return EngineError{EngineErrc::kInvalidSampling,
                         "stop_token_ids id " + std::to_string(id) + " is outside the vocabulary"};
  }
  if (auto why = guide_conflict(job)) return EngineError{EngineErrc::kInvalidSampling, *why};
  const int64_t room = max_positions() - static_cast<int64_t>(job.prompt.size());
  if (room < 1)
    return EngineError{EngineErrc::kContextExceeded, "This model's maximum context length is " +
                                                         std::to_string(max_positions()) + " tokens; the messages use " +
                                                         std::to_string(job.prompt.size())};
  job.max_tokens = std::min(job.max_tokens, room);
  if (!job.cancelled) job.cancelled = std::make_shared<std::atomic<bool>>(false);  // nobody will cancel it
  sched::SequenceState peak;
  peak.prompt_len = static_cast<int64_t>(job.prompt.size());
  peak.max_tokens = job.max_tokens;
  peak.extra_choices = std::max(1, job.sampling.n) - 1;
  if (sched::peak_blocks(peak, options_.kv_block_size, /*forks_copy_prompt=*/true) > working_blocks_)
    return EngineError{EngineErrc::kTooLarge,
                       "the prompt plus max_tokens (times n) needs more KV memory than this engine's working_kv "
                       "allows; lower max_tokens or n"};
  const sched::RequestId id = next_request_id_++;
  switch (queue_.push(id, std::move(job))) {
    case sched::PushResult::kOk: break;
    case sched::PushResult::kKeyFull:
      return EngineError{EngineErrc::kQueueFull, "this API key's share of the engine queue is full; retry shortly"};
    default: return EngineError{EngineErrc::kQueueFull, "the engine queue is full; retry shortly"};
  }
  return std::nullopt;
}

// Fast mode on an accelerator (or with kv_slots "on") keeps the running
// sequences' KV in slots of one tensor per layer (Model::reserve_kv_slots),
// so that a decode step's attention costs a few operations whatever the
// batch, and its decode steps run at fixed shapes (CUDA graphs on a CUDA
// device) unless cuda_graphs is off: one slot per sequence of a pass, as
// many positions each as working_kv allows (a longer sequence moves to
// tensors of its own). Otherwise caches stay separate and grow on demand.
void Engine::reserve_kv_slots() {
  const std::string& mode = options_.kv_slots;
  if (mode != "auto" && mode != "on" && mode != "off") {
    throw std::runtime_error("engine.kv_slots must be auto, on or off, not '" + mode + "'");
  }
  if (model_->strict()) {
    if (mode == "on") throw std::runtime_error("engine.kv_slots = on needs numeric_mode 'fast'");
    return;
  }
  if (mode == "off" || (mode == "auto" && options_.device == "cpu")) return;
  const ModelConfig& c = model_->config();
  const int64_t per_token = kv_bytes_per_token(c, model_->compute_dtype_name() == "float32" ? 4 : 2);
  const int64_t slots = std::max<int32_t>(1, options_.max_batch_size);
  const int64_t tokens = std::min<int64_t>(c.max_positions, options_.working_kv_bytes / (slots * per_token));
  if (tokens < 64) {
    if (mode == "on") {
      throw std::runtime_error("engine.kv_slots = on needs 64 positions per slot; the model's context (" +
                               std::to_string(c.max_positions) + ") and engine.working_kv over " +
                               std::to_string(slots) + " slots (engine.max_batch_size) leave " +
                               std::to_string(tokens));
    }
    return;
  }
  model_->reserve_kv_slots(slots, tokens);
  model_->set_static_decode(options_.cuda_graphs && (options_.device == "cpu" || model_->static_decode()));
}

void Engine::loop() {
  torch::InferenceMode guard;
  const size_t max_waiting = static_cast<size_t>(options_.max_batch_size);
  while (!stopping_) {
    const size_t waiting = runner_->waiting_requests();
    auto drained = queue_.drain(waiting < max_waiting ? max_waiting - waiting : 0);
    for (auto& [id, job] : drained.jobs) runner_->add(std::move(job));
    const bool worked = runner_->step();
    {
      std::lock_guard lock(kv_counters_mutex_);
      batch_stats_ = runner_->stats();
    }
    if (!worked) queue_.wait(std::chrono::milliseconds(100));
  }
  runner_.reset();  // drops what is in flight (the server drains before it stops)
}

}  // namespace reprox::engine
