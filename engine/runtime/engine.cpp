#include "engine/runtime/engine.hpp"

#include <openssl/sha.h>
#include <torch/torch.h>

#include <filesystem>

#include "engine/model/model.hpp"
#include "engine/runtime/choice_emitter.hpp"
#include "engine/runtime/kv_reuse.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sampling/stop_token_ids.hpp"

namespace reprox::engine {

namespace {

// Bump when a change to the engine can change any output bit.
constexpr const char* kEngineBuild = "reprox-engine-1";

std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}

SamplingParams sampling_params(const BackendRequest& r) {
  SamplingParams p;
  p.temperature = r.chat.temperature;
  p.top_p = r.chat.top_p;
  p.top_k = static_cast<int32_t>(r.chat.top_k);
  p.presence_penalty = r.chat.presence_penalty;
  p.frequency_penalty = r.chat.frequency_penalty;
  for (const auto& [id, bias] : r.chat.logit_bias) p.logit_bias.emplace_back(static_cast<int32_t>(id), bias);
  p.seed = r.seed;
  p.n = static_cast<int>(r.chat.n);
  p.logprobs = r.chat.logprobs;
  p.top_logprobs = static_cast<int>(r.chat.top_logprobs);
  return p;
}

}  // namespace

std::string make_system_fingerprint(const std::string& weights_fingerprint, const std::string& dtype,
                                    const std::string& device, const std::string& numeric_mode_id) {
  std::string material = std::string("weights=") + weights_fingerprint + "|engine=" + kEngineBuild +
                         "|mode=" + numeric_mode_id + "|dtype=" + dtype + "|device=" + device;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest);
  return "fp_" + hex(digest, 8);
}

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  LoadOptions lo;
  lo.device = options_.device;
  lo.threads = options_.threads;
  lo.numeric_mode = options_.numeric_mode;
  model_ = Model::load(options_.model_dir, lo);
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
                                         model_->device_name(), model_->numeric_mode_id());
  if (options_.kv_budget_bytes > 0) {
    KvReuseOptions ro;
    ro.budget_bytes = options_.kv_budget_bytes;
    kv_reuse_ = std::make_unique<KvReuse>(model_->new_cache(1), ro);
    if (!kv_reuse_->enabled()) kv_reuse_.reset();  // budget under one block
  }
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& job : queue_) job.cancelled->store(true);
  }
  cv_.notify_all();
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

int64_t Engine::max_positions() const { return model_->config().max_positions; }

bool Engine::submit(EngineJob job) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.queue_capacity) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void Engine::loop() {
  for (;;) {
    EngineJob job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (job.cancelled->load()) continue;
    run(job);
    publish_kv_counters();
  }
}

void Engine::run(EngineJob& job) {
  torch::InferenceMode guard;
  const BackendRequest& req = *job.request;
  const int32_t vocab = std::min<int32_t>(tokenizer_->vocab_size(), static_cast<int32_t>(model_->config().vocab_size));
  const uint32_t n = static_cast<uint32_t>(std::max<int64_t>(1, req.chat.n));
  const SamplingParams params = sampling_params(req);
  auto is_stop_id = [this](int32_t id) {
    for (int32_t s : stop_ids_)
      if (s == id) return true;
    return false;
  };

  // Prefill once; every choice starts from a copy of the prompt's KV. With
  // reuse, the tenant's longest cached prefix is copied in first and only the
  // rest of the prompt is computed; the lease holds those blocks until run()
  // returns.
  KvCache prompt_kv = model_->new_cache(static_cast<int64_t>(job.prompt.size()) + job.max_tokens + 1);
  KvLease lease;
  if (kv_reuse_) lease = kv_reuse_->acquire(req.tenant, job.prompt, prompt_kv);
  struct ReleaseLease {
    KvReuse* reuse;
    KvLease& lease;
    ~ReleaseLease() {
      if (reuse) reuse->release(lease);
    }
  } release_lease{kv_reuse_.get(), lease};
  const std::vector<int32_t> uncached(job.prompt.begin() + lease.cached_tokens, job.prompt.end());
  std::string error;
  torch::Tensor prompt_logits = model_->forward(uncached, prompt_kv, false, &error);
  if (!prompt_logits.defined()) {
    job.sink->on_error(api::ApiError{400, "the prompt cannot be processed: " + error, "invalid_request_error", "messages", ""});
    return;
  }

  Usage usage;
  usage.prompt_tokens = static_cast<int64_t>(job.prompt.size());
  usage.cached_tokens = lease.cached_tokens;
  SamplerScratch scratch;
  for (uint32_t choice = 0; choice < n; ++choice) {
    KvCache kv = prompt_kv;
    for (size_t l = 0; l < kv.k.size(); ++l) {
      kv.k[l] = prompt_kv.k[l].clone();
      kv.v[l] = prompt_kv.v[l].clone();
    }
    torch::Tensor logits = prompt_logits.contiguous();
    Sampler sampler(params, vocab, choice);
    ChoiceEmitter emitter(tokenizer_, choice, req.chat.stop, req.chat.logprobs);
    std::vector<int32_t> sequence;  // tokens whose KV is in kv, for reuse by the next turn
    if (kv_reuse_) sequence = job.prompt;
    bool finished = false;
    for (int64_t step = 0; step < job.max_tokens && !finished; ++step) {
      if (job.cancelled->load(std::memory_order_relaxed)) return;
      SampleResult sample;
      if (sampler.sample(logits.data_ptr<float>(), &sample, &scratch) != SampleStatus::kOk) {
        job.sink->on_error(api::ApiError{500, "the model produced no finite logits", "server_error", "", "numeric_error"});
        return;
      }
      ++usage.completion_tokens;
      if (is_stop_id(sample.token)) {
        job.sink->on_event(emitter.finish("stop"));
        finished = true;
        break;
      }
      bool stopped = false;
      if (auto event = emitter.token(sample.token, sample, &stopped)) job.sink->on_event(std::move(*event));
      if (stopped) {
        finished = true;
        break;
      }
      if (step + 1 == job.max_tokens) break;
      if (kv_reuse_) sequence.push_back(sample.token);
      logits = model_->forward({sample.token}, kv, false, &error);
      if (!logits.defined()) {
        job.sink->on_error(api::ApiError{500, "generation failed: " + error, "server_error", "", ""});
        return;
      }
      logits = logits.contiguous();
    }
    if (!finished) job.sink->on_event(emitter.finish("length"));
    if (kv_reuse_) kv_reuse_->keep(req.tenant, sequence, kv);
  }
  if (kv_reuse_) kv_reuse_->release(lease);
  publish_kv_counters();  // before on_complete, so a caller that saw the answer sees its counters
  job.sink->on_complete(usage, fingerprint_);
}

}  // namespace reprox::engine
