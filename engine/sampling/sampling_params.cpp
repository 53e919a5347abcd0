#include "engine/sampling/sampling_params.hpp"

#include <cmath>

namespace reprox::engine {
namespace {

bool in_range(double value, double low, double high) {
  return std::isfinite(value) && value >= low && value <= high;
}

}  // namespace

std::string validate_sampling_params(const SamplingParams& params, int32_t vocab_size) {
  if (vocab_size <= 0) return "vocabulary is empty";
  if (!std::isfinite(params.temperature) || params.temperature < 0.0)
    return "temperature must be a finite number >= 0";
  if (!in_range(params.top_p, 0.0, 1.0)) return "top_p must be between 0 and 1";
  if (params.top_k < 0) return "top_k must be >= 0 (0 disables it)";
  if (!in_range(params.presence_penalty, -2.0, 2.0))
    return "presence_penalty must be between -2 and 2";
  if (!in_range(params.frequency_penalty, -2.0, 2.0))
    return "frequency_penalty must be between -2 and 2";
  if (!in_range(params.min_p, 0.0, 1.0)) return "min_p must be between 0 and 1";
  if (!in_range(params.repetition_penalty, 0.0, 10.0) || params.repetition_penalty == 0.0)
    return "repetition_penalty must be greater than 0 and at most 10";
  if (params.min_tokens < 0) return "min_tokens must be >= 0";
  for (const auto& [id, bias] : params.logit_bias) {
    if (id < 0 || id >= vocab_size)
      return "logit_bias token id " + std::to_string(id) + " is outside the vocabulary";
    if (!in_range(bias, -100.0, 100.0)) return "logit_bias values must be between -100 and 100";
  }
  for (const int32_t id : params.allowed_ids) {
    if (id < 0 || id >= vocab_size)
      return "allowed_token_ids id " + std::to_string(id) + " is outside the vocabulary";
  }
  for (const auto& word : params.bad_words) {
    if (word.empty()) return "bad_words entries must have at least one token";
  }
  if (params.n < 1 || params.n > 128) return "n must be between 1 and 128";
  if (params.top_logprobs < 0 || params.top_logprobs > kMaxTopLogprobs)
    return "top_logprobs must be between 0 and 20";
  if (params.top_logprobs > 0 && !params.logprobs)
    return "top_logprobs requires logprobs to be true";
  return "";
}

}  // namespace reprox::engine
