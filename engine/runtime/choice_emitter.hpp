// Turns one choice's sampled tokens into the stream of GenEvents a client
// sees: incremental detokenization (never a partial UTF-8 character), stop
// strings held back until they can no longer match, and logprobs entries.
// Torch-free; one emitter per choice, used by one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling/sampler.hpp"
#include "engine/sampling/stop_matcher.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "common/generation.hpp"

namespace reprox::engine {

struct EmitterOptions {
  std::vector<std::string> stop;  // stop strings
  bool logprobs = false;
  bool include_stop = false;  // vLLM's include_stop_str_in_output: a matched stop string is sent
  bool skip_special = true;   // vLLM's skip_special_tokens: special tokens have no text
  bool token_ids = false;     // vLLM's return_tokens_as_token_ids: logprobs tokens are "token_id:ID"
};

class ChoiceEmitter {
 public:
  ChoiceEmitter(std::shared_ptr<const tok::Tokenizer> tokenizer, uint32_t choice, EmitterOptions options);

  // A sampled token that does not end the choice by its id (or does, with
  // include_stop: its text is sent, then finish). Returns the event to send,
  // if any; sets *stopped when a stop string matched (the choice is
  // finished: its finish event was returned, finish_reason "stop").
  // may_stop false: no stop string may end in this token's text (vLLM's
  // min_tokens).
  std::optional<GenEvent> token(int32_t id, const SampleResult& sample, bool* stopped, bool may_stop = true);
  // The choice ended by eos ("stop") or by its token limit ("length"):
  // releases held text and returns the finishing event.
  GenEvent finish(const std::string& finish_reason);

 private:
  std::string token_name(int32_t id) const;  // a logprobs entry's "token"

  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  uint32_t choice_;
  tok::StreamDecoder decoder_;
  StopMatcher stop_;
  bool logprobs_;
  bool token_ids_;
  std::string pending_logprobs_;  // entries of tokens whose text is still held
};

}  // namespace reprox::engine
