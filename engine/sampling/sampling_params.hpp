// Per-request sampling parameters (OpenAI Chat Completions semantics, plus
// top_k as an extension) and their validation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reprox::engine {

class TokenGuide;

struct SamplingParams {
  double temperature = 1.0;  // 0 (below 1e-5 in practice) = greedy
  double top_p = 1.0;        // nucleus mass in [0, 1]; 1 = off
  int32_t top_k = 0;         // 0 = off
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  // vLLM's extensions. min_p: after temperature, tokens whose weight
  // exp(x - max x) is below it are dropped (0 = off). repetition_penalty: the
  // logit of a token of the prompt or of this choice's completion is divided
  // by it when positive and multiplied by it otherwise (1 = off).
  double min_p = 0.0;
  double repetition_penalty = 1.0;
  // vLLM's min_tokens: while fewer than min_tokens completion tokens have
  // been drawn, the ids in end_ids (those that would end the choice: the
  // engine fills them in) cannot be drawn. Ids outside the vocabulary are
  // ignored.
  int64_t min_tokens = 0;
  std::vector<int32_t> end_ids;
  // vLLM's allowed_token_ids: when not empty, only these ids can be drawn.
  std::vector<int32_t> allowed_ids;
  // vLLM's bad_words, as token id sequences: the last id of a sequence
  // cannot be drawn when this choice's completion ends with the ids before it.
  std::vector<std::vector<int32_t>> bad_words;
  // Guided decoding (token_guide.hpp): when set, only tokens that keep the
  // text inside the guide's language can be drawn. The engine builds it.
  std::shared_ptr<const TokenGuide> guide;
  // (token id, bias) added to the raw logit, applied in list order.
  std::vector<std::pair<int32_t, double>> logit_bias;
  uint64_t seed = 0;
  int n = 1;  // number of choices; the engine runs one Sampler per choice
  bool logprobs = false;
  int top_logprobs = 0;  // 0..20; needs logprobs
};

// Temperatures below this are greedy (as vLLM's _SAMPLING_EPS): dividing by
// them could overflow.
constexpr double kGreedyTemperature = 1e-5;
constexpr int kMaxTopLogprobs = 20;

// "" when `params` are valid for a vocabulary of `vocab_size` ids; otherwise
// a message naming the offending field, fit for a 400 response:
// temperature finite >= 0; top_p in [0, 1]; top_k >= 0; penalties in
// [-2, 2]; min_p in [0, 1]; repetition_penalty in (0, 10]; min_tokens >= 0;
// logit_bias and allowed_ids ids in [0, vocab_size), biases in
// [-100, 100]; bad_words sequences not empty; n in [1, 128]; top_logprobs
// in [0, 20] and only with logprobs.
std::string validate_sampling_params(const SamplingParams& params, int32_t vocab_size);

}  // namespace reprox::engine
