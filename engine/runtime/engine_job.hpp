// The engine's own request and result types: token ids in, events out. No
// HTTP, no OpenAI JSON, no cache; proxy/backend/local_backend translates.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/generation.hpp"
#include "engine/sampling/sampling_params.hpp"
#include "engine/sampling/token_guide.hpp"

namespace reprox::engine {

// Why the engine could not finish (or start) a job.
enum class EngineErrc {
  kQueueFull,         // the bounded queue is full: retry later
  kTooLarge,          // prompt + max_tokens (times n) exceed the KV working memory
  kContextExceeded,   // the prompt leaves no room in the model's context window
  kTemplateRaised,    // the chat template called raise_exception(): the messages are at fault
  kTemplateFailed,    // the chat template could not render these messages
  kOutOfWorkingMemory,  // nothing runs and the waiting job does not fit (misconfiguration)
  kNumeric,           // the model produced no finite logits
  kForwardFailed,     // the forward pass failed
  kInvalidSampling,   // the sampling parameters are out of range (validate_sampling_params)
};

struct EngineError {
  EngineErrc code;
  std::string message;
};

// Receives one job's output: every event of choice 0, then of choice 1, ...
// (OrderedOutput), then exactly one on_complete or on_error. Calls come from
// the engine thread; an implementation posts to its own executor.
class EngineSink {
 public:
  virtual ~EngineSink() = default;
  virtual void on_event(GenEvent event) = 0;
  virtual void on_complete(const Usage& usage, const std::string& system_fingerprint) = 0;
  virtual void on_error(const EngineError& error) = 0;
};

struct EngineJob {
  std::vector<int32_t> prompt;    // token ids, the chat template already applied
  SamplingParams sampling;        // seed and n included
  std::vector<std::string> stop;  // stop strings, held back until they cannot match
  // vLLM's extensions. stop_token_ids end a choice as the model's eos ids do
  // (finish "stop", the id's text not sent); ignore_eos: the model's eos ids
  // do not; include_stop: a matched stop string, or the text of the id that
  // ended the choice, is sent; skip_special false: special tokens' text is
  // sent. sampling.min_tokens holds back every id that would end a choice.
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  bool include_stop = false;
  bool skip_special = true;
  bool logprob_token_ids = false;  // logprobs name tokens "token_id:ID" (vLLM's return_tokens_as_token_ids)
  // Guided decoding: the text of every choice stays inside this language
  // (token_guide.hpp). Not with min_tokens or allowed ids, nor with nothing
  // to end a choice (ignore_eos and no stop_token_ids).
  GuideSpec guide;
  int64_t max_tokens = 0;         // completion limit; Engine::submit clips it to the context window
  std::string tenant;             // salts KV reuse: tenants never share KV
  std::shared_ptr<EngineSink> sink;
  // Set by the owner to cancel; the engine thread drops the job at its next
  // step. Null: Engine::submit gives it a flag nobody sets.
  std::shared_ptr<std::atomic<bool>> cancelled;
};

}  // namespace reprox::engine
