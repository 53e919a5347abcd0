// Logprobs of the raw distribution: log-softmax over the whole vocabulary of
// the biased logits (before penalties, temperature and truncation); see
// ../sampler.hpp, step 2.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sampling/sampler.hpp"

namespace reprox::engine::internal {

// Reported logprobs never go below this (OpenAI reports -9999.0 for tokens
// that cannot occur); keeps them finite for JSON.
constexpr float kLogprobFloor = -9999.0f;

struct RawLogSoftmax {
  bool valid = false;       // false when no entry is finite
  double max_value = 0.0;   // max of x
  double sum = 0.0;         // sum_i exp(x_i - max), in id order
  double log_sum = 0.0;     // log(sum)
};

// x: (n) biased logits, -inf = impossible. weights: (n) or null; receives
// exp(x_i - max) when given (the sampler reuses them when temperature is 1
// and no penalty applies).
RawLogSoftmax raw_log_softmax(const double* x, int32_t n, double* weights);

// float((x - max) - log_sum), clamped below at kLogprobFloor.
float logprob_of(double x, const RawLogSoftmax& raw);

// The k best (logprob desc, id asc) entries by their float logprob, best first.
void select_top_logprobs(const double* x, int32_t n, const RawLogSoftmax& raw, int k,
                         std::vector<TokenLogprob>* out);

}  // namespace reprox::engine::internal
