#include "engine/sampling/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/sampling/internal/exp_batch.hpp"
#include "engine/sampling/internal/logprobs.hpp"
#include "engine/sampling/internal/truncation.hpp"
#include "engine/sampling/philox.hpp"

namespace reprox::engine {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Index of the largest value, ties to the lowest index; -1 if all are -inf.
int32_t argmax_lowest_id(const double* x, int32_t size) {
  int32_t best = -1;
  double best_value = kMinusInfinity;
  for (int32_t i = 0; i < size; ++i) {
    if (x[i] > best_value) {
      best_value = x[i];
      best = i;
    }
  }
  return best;
}

// Inverse CDF over weights visited in order: the first entry whose running sum
// exceeds u * total, where total is the running sum over all entries (so the
// walk ends exactly at it). If rounding made u * total == total, the last
// entry with positive weight is taken.
template <typename WeightAt>
int32_t inverse_cdf(double u, int64_t count, const WeightAt& weight_at, double total) {
  const double target = u * total;
  double running = 0.0;
  int64_t last_positive = -1;
  for (int64_t j = 0; j < count; ++j) {
    const double w = weight_at(j);
    if (w > 0.0) last_positive = j;
    running += w;
    if (running > target) return static_cast<int32_t>(j);
  }
  return static_cast<int32_t>(last_positive);
}

}  // namespace

Sampler::Sampler(SamplingParams params, int32_t vocab_size, uint32_t choice, const std::vector<int32_t>& prompt)
    : params_(std::move(params)),
      vocab_size_(vocab_size),
      choice_(choice),
      track_counts_(params_.presence_penalty != 0.0 || params_.frequency_penalty != 0.0) {
  if (track_counts_) counts_.assign(static_cast<size_t>(vocab_size_), 0u);
  if (params_.repetition_penalty != 1.0) {
    repeated_.assign(static_cast<size_t>(vocab_size_), 0u);
    for (const int32_t id : prompt) mark_repeated(id);
  }
  if (!params_.allowed_ids.empty()) {
    allowed_.assign(static_cast<size_t>(vocab_size_), 0u);
    for (const int32_t id : params_.allowed_ids)
      if (id >= 0 && id < vocab_size_) allowed_[static_cast<size_t>(id)] = 1;
  }
  if (params_.guide) guide_.emplace(params_.guide->start());
}

void Sampler::mark_repeated(int32_t token) {
  if (repeated_.empty() || token < 0 || token >= vocab_size_) return;
  if (!repeated_[static_cast<size_t>(token)]) {
    repeated_[static_cast<size_t>(token)] = 1;
    repeated_ids_.push_back(token);
  }
}

void Sampler::record(int32_t token) {
  history_.push_back(token);
  if (guide_) guide_->advance(token);
  mark_repeated(token);
  if (!track_counts_ || token < 0 || token >= vocab_size_) return;
  if (counts_[static_cast<size_t>(token)]++ == 0) seen_ids_.push_back(token);
}

bool Sampler::argmax_decides() const {
  return params_.temperature < kGreedyTemperature && params_.logit_bias.empty() && !track_counts_ &&
         params_.repetition_penalty == 1.0 && !params_.logprobs && !masking();
}

bool Sampler::masking() const {
  return suppressing_end() || !allowed_.empty() || !params_.bad_words.empty() || guide_.has_value();
}

bool Sampler::suppressing_end() const {
  return static_cast<int64_t>(step()) < params_.min_tokens && !params_.end_ids.empty();
}

SampleStatus Sampler::take_argmax(int32_t argmax, SampleResult* out) {
  if (argmax < 0 || argmax >= vocab_size_) return SampleStatus::kNoFiniteLogit;
  out->token = argmax;
  out->logprob = 0.0f;
  out->top_logprobs.clear();
  record(argmax);
  return SampleStatus::kOk;
}

void Sampler::load_biased_logits(const float* logits, double* x) const {
  for (int32_t i = 0; i < vocab_size_; ++i) {
    const float value = logits[i];
    x[i] = std::isfinite(value) ? static_cast<double>(value) : kMinusInfinity;
  }
  for (const auto& [id, bias] : params_.logit_bias) {
    if (id >= 0 && id < vocab_size_) x[id] += bias;
  }
}

void Sampler::apply_masks(double* x) const {
  auto ban = [&](int32_t id) {
    if (id >= 0 && id < vocab_size_) x[id] = kMinusInfinity;
  };
  if (suppressing_end())
    for (const int32_t id : params_.end_ids) ban(id);
  if (!allowed_.empty())
    for (int32_t id = 0; id < vocab_size_; ++id)
      if (!allowed_[static_cast<size_t>(id)]) x[id] = kMinusInfinity;
  for (const auto& word : params_.bad_words) {
    const size_t before = word.size() - 1;  // validated: not empty
    if (before <= history_.size() && std::equal(word.begin(), word.end() - 1, history_.end() - before))
      ban(word.back());
  }
  if (guide_) guide_->mask(x, vocab_size_);
}

void Sampler::apply_penalties(double* x) const {
  const double r = params_.repetition_penalty;
  for (const int32_t id : repeated_ids_) x[id] = x[id] > 0.0 ? x[id] / r : x[id] * r;
  for (const int32_t id : seen_ids_) {
    const double count = static_cast<double>(counts_[static_cast<size_t>(id)]);
    x[id] -= count * params_.frequency_penalty + params_.presence_penalty;
  }
}

// x: (vocab_size) penalized logits, overwritten. `raw` (may be null) holds
// weights exp(x - max x) already computed for exactly these x (temperature 1,
// no penalty applied). Returns the token, -1 if none.
int32_t Sampler::draw(double* x, const internal::RawLogSoftmax* raw, SamplerScratch* scratch) const {
  const double temperature = params_.temperature;
  if (temperature < kGreedyTemperature) return argmax_lowest_id(x, vocab_size_);

  const double u = sampling_uniform(params_.seed, choice_, step());
  const bool top_k_active = params_.top_k > 0 && params_.top_k < vocab_size_;
  const bool truncated = top_k_active || params_.top_p < 1.0;
  if (raw != nullptr && !truncated) {  // raw is given only without min_p
    const double* weights = scratch->weights.data();
    return inverse_cdf(u, vocab_size_, [&](int64_t i) { return weights[i]; }, raw->sum);
  }

  double max_value = kMinusInfinity;
  if (temperature == 1.0) {
    for (int32_t i = 0; i < vocab_size_; ++i) max_value = std::max(max_value, x[i]);
  } else {
    const double inverse_temperature = 1.0 / temperature;
    for (int32_t i = 0; i < vocab_size_; ++i) {
      x[i] *= inverse_temperature;
      max_value = std::max(max_value, x[i]);
    }
  }
  if (max_value == kMinusInfinity) return -1;
  if (params_.min_p > 0.0) {  // min_p 1 keeps the largest x and its ties
    const double floor = max_value + internal::log_inline(params_.min_p);
    for (int32_t i = 0; i < vocab_size_; ++i)
      if (x[i] < floor) x[i] = kMinusInfinity;
  }

  if (truncated) {
    scratch->candidates.resize(static_cast<size_t>(vocab_size_));
    const internal::KeptPrefix kept =
        top_k_active
            ? internal::truncate_top_k_then_top_p(x, vocab_size_, params_.top_k, params_.top_p,
                                                  scratch->candidates.data())
            : internal::truncate_top_p(x, vocab_size_, max_value, params_.top_p,
                                       scratch->candidates.data());
    const SamplerScratch::Candidate* kept_candidates = scratch->candidates.data();
    const int32_t index = inverse_cdf(
        u, kept.size, [&](int64_t j) { return kept_candidates[j].weight; }, kept.total_weight);
    return index < 0 ? -1 : kept_candidates[index].id;
  }

  internal::exp_shifted(x, vocab_size_, max_value, x);
  double total = 0.0;
  for (int32_t i = 0; i < vocab_size_; ++i) total += x[i];  // in id order
  return inverse_cdf(u, vocab_size_, [&](int64_t i) { return x[i]; }, total);
}

SampleStatus Sampler::sample(const float* logits, SampleResult* out, SamplerScratch* scratch) {
  if (scratch == nullptr) {
    if (!own_scratch_) own_scratch_ = std::make_unique<SamplerScratch>();
    scratch = own_scratch_.get();
  }
  scratch->values.resize(static_cast<size_t>(vocab_size_));
  double* x = scratch->values.data();
  load_biased_logits(logits, x);

  internal::RawLogSoftmax raw{};
  out->top_logprobs.clear();
  // With temperature 1 and no penalty in effect the sampling weights are the
  // raw weights: compute them once.
  const bool share_weights = params_.logprobs && params_.temperature == 1.0 && seen_ids_.empty() &&
                             repeated_ids_.empty() && params_.min_p == 0.0 && !masking();
  if (params_.logprobs) {
    double* weights = nullptr;
    if (share_weights) {
      scratch->weights.resize(static_cast<size_t>(vocab_size_));
      weights = scratch->weights.data();
    }
    raw = internal::raw_log_softmax(x, vocab_size_, weights);
    if (!raw.valid) return SampleStatus::kNoFiniteLogit;
    internal::select_top_logprobs(x, vocab_size_, raw, params_.top_logprobs, &out->top_logprobs);
  }

  apply_masks(x);
  apply_penalties(x);
  const int32_t token = draw(x, share_weights ? &raw : nullptr, scratch);
  if (token < 0) return SampleStatus::kNoFiniteLogit;

  out->token = token;
  out->logprob = 0.0f;
  if (params_.logprobs) {
    // Recompute the token's biased logit exactly as load_biased_logits did.
    const float value = logits[token];
    double biased = std::isfinite(value) ? static_cast<double>(value) : kMinusInfinity;
    for (const auto& [id, bias] : params_.logit_bias) {
      if (id == token) biased += bias;
    }
    out->logprob = internal::logprob_of(biased, raw);
  }
  record(token);
  return SampleStatus::kOk;
}

}  // namespace reprox::engine
