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

class ChoiceEmitter {
 public:
  ChoiceEmitter(std::shared_ptr<const tok::Tokenizer> tokenizer, uint32_t choice, std::vector<std::string> stop,
                bool logprobs);

  // A sampled token that is not a stop id. Returns the event to send, if
  // any; sets *stopped when a stop string matched (the choice is finished:
  // its finish event was returned, finish_reason "stop").
  std::optional<GenEvent> token(int32_t id, const SampleResult& sample, bool* stopped);
  // The choice ended by eos ("stop") or by its token limit ("length"):
  // releases held text and returns the finishing event.
  GenEvent finish(const std::string& finish_reason);

 private:
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  uint32_t choice_;
  tok::StreamDecoder decoder_;
  StopMatcher stop_;
  bool logprobs_;
  std::string pending_logprobs_;  // entries of tokens whose text is still held
};

}  // namespace reprox::engine
