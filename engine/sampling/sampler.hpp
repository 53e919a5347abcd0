// Reproducible token sampler: one Sampler per choice of a request.
//
// A draw is a pure function of (the logits' bytes, SamplingParams, the tokens
// this choice has produced so far, seed, choice index, step): randomness comes
// only from Philox4x32-10 keyed by (seed, choice, step) (philox.hpp), and every
// reduction (max, sum of exp, cumulative sums) runs sequentially in double
// precision with det_exp/det_log (deterministic_math.hpp), so results are
// bit-identical across machines, thread counts and batch neighbours.
//
// Pipeline for one step, on the first vocab_size logits:
//   1. x = logits as double (NaN/inf count as -inf, i.e. impossible), then
//      x[id] += bias for each logit_bias entry, in list order.
//   2. logprobs (if requested) are taken HERE: the log-softmax of x over the
//      whole vocabulary, i.e. the raw model distribution after logit_bias and
//      BEFORE penalties, temperature, top-k and top-p (vLLM's default
//      "raw logprobs"). Computed in double, returned as float, clamped below
//      at -9999 (OpenAI's value for "impossible") so they stay finite JSON.
//   3. Masks, x[id] = -inf: each id of end_ids while fewer than min_tokens
//      tokens are drawn; with allowed_ids, every other id; for each
//      bad_words sequence whose ids but the last end the completion so far,
//      that last id; with a guide, every id it does not allow next
//      (token_guide.hpp). Then penalties: first repetition_penalty r (vLLM's, as
//      Hugging Face's): x[t] = x[t] > 0 ? x[t] / r : x[t] * r for each id t
//      of the prompt or of this choice's completion so far; then OpenAI's:
//      x[t] -= count[t] * frequency_penalty + (count[t] > 0) *
//      presence_penalty, with count over this choice's completion tokens so
//      far (prompt tokens do not count).
//   4. temperature < kGreedyTemperature: argmax of x, ties to the lowest id.
//   5. Otherwise x *= (1 / temperature) (skipped at exactly 1); then min_p
//      (vLLM's) drops every token with x < max x + det_log(min_p) (x = -inf);
//      then, if truncation is active (0 < top_k < vocab_size, or top_p < 1):
//        - top_k keeps the k largest x (ties to the lower id);
//        - w = exp(x - max x) over the kept tokens, ordered by w descending
//          then id ascending (a total order);
//        - top_p keeps the shortest prefix of that order whose running sum of
//          w reaches top_p * W, W = sum of w over the top-k survivors in that
//          order (without top_k: over all tokens in ascending id order); at
//          least one token;
//        - the draw walks the kept prefix in that order.
//      Without truncation the draw walks all ids in ascending order.
//   6. Inverse CDF: u = sampling_uniform(seed, choice, step) in [0, 1);
//      pick the first token whose running sum of w exceeds u * (total w).
//
// Threading: a Sampler is used by one thread at a time. A SamplerScratch may be
// shared by many Samplers of one thread (e.g. all choices on an engine thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/sampling/sampling_params.hpp"
#include "engine/sampling/token_guide.hpp"

namespace reprox::engine {

namespace internal {
struct RawLogSoftmax;
}

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

struct SampleResult {
  int32_t token = -1;
  float logprob = 0.0f;  // of `token`; set only when params.logprobs
  // The params.top_logprobs most likely tokens, by logprob descending then id
  // ascending; empty unless params.logprobs.
  std::vector<TokenLogprob> top_logprobs;
};

enum class SampleStatus {
  kOk,
  kNoFiniteLogit,  // every logit was NaN/inf; nothing can be sampled
};

// Working buffers for one sampling step (up to 32 bytes per vocabulary entry,
// grown on first use). Not shared between threads.
class SamplerScratch {
 public:
  struct Candidate {
    double weight;  // x before exp, then exp(x - max)
    int32_t id;
  };
  std::vector<double> values;          // (vocab_size)
  std::vector<double> weights;         // (vocab_size) when logprobs share the softmax
  std::vector<Candidate> candidates;   // (vocab_size)
};

class Sampler {
 public:
  // `params` should have passed validate_sampling_params(params, vocab_size);
  // out-of-range logit_bias ids are ignored. `choice` is the choice index
  // (0..n-1) that keys the random stream. `prompt`: the request's prompt
  // ids, read (not kept) for repetition_penalty.
  Sampler(SamplingParams params, int32_t vocab_size, uint32_t choice, const std::vector<int32_t>& prompt = {});

  // Samples step `step()` from `logits` (vocab_size floats, read only), fills
  // `*out` (its vectors are reused) and records the token. Uses `scratch` when
  // given, else buffers owned by this Sampler. On an error nothing is recorded.
  SampleStatus sample(const float* logits, SampleResult* out, SamplerScratch* scratch = nullptr);

  // Whether this step's draw is the argmax of the raw logits: greedy, with
  // no logit_bias, no penalty (repetition_penalty 1), no logprobs and no
  // mask (allowed_ids, bad_words, a guide, end ids held back by min_tokens). Then
  // take_argmax() with the lowest id of the largest finite logit (computed
  // anywhere, e.g. on the model's device) does exactly what sample() on the
  // whole row would.
  bool argmax_decides() const;
  // For argmax_decides(): records `argmax` as the drawn token and fills
  // `*out` as sample() would; -1 (no finite logit) is kNoFiniteLogit and
  // records nothing.
  SampleStatus take_argmax(int32_t argmax, SampleResult* out);

  // Records a completion token that was not drawn here (e.g. replaying a
  // known prefix); advances step() exactly as sample() would.
  void record(int32_t token);

  uint64_t step() const { return history_.size(); }
  const std::vector<int32_t>& history() const { return history_; }
  const SamplingParams& params() const { return params_; }
  int32_t vocab_size() const { return vocab_size_; }
  uint32_t choice() const { return choice_; }

 private:
  void load_biased_logits(const float* logits, double* x) const;
  bool suppressing_end() const;  // min_tokens not reached and end_ids to hold back
  bool masking() const;          // a mask of step 3 applies to this step
  void apply_masks(double* x) const;
  void apply_penalties(double* x) const;
  void mark_repeated(int32_t token);
  int32_t draw(double* x, const internal::RawLogSoftmax* raw, SamplerScratch* scratch) const;

  SamplingParams params_;
  int32_t vocab_size_;
  uint32_t choice_;
  bool track_counts_;
  std::vector<int32_t> history_;
  std::vector<uint32_t> counts_;    // (vocab_size) when track_counts_
  std::vector<int32_t> seen_ids_;   // distinct ids in history, first-seen order
  // With repetition_penalty != 1: which ids the prompt or history holds
  // (vocab_size flags), and those ids in first-seen order.
  std::vector<uint8_t> repeated_;
  std::vector<int32_t> repeated_ids_;
  std::vector<uint8_t> allowed_;  // (vocab_size) flags when allowed_ids is not empty
  std::optional<TokenGuide::Cursor> guide_;  // when params.guide
  std::unique_ptr<SamplerScratch> own_scratch_;
};

}  // namespace reprox::engine
