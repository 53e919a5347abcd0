#include "engine/sampling/internal/logprobs.hpp"

#include <limits>

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/sampling/internal/exp_batch.hpp"

namespace reprox::engine::internal {

RawLogSoftmax raw_log_softmax(const double* x, int32_t n, double* weights) {
  double max_value = -std::numeric_limits<double>::infinity();
  for (int32_t i = 0; i < n; ++i) {
    if (x[i] > max_value) max_value = x[i];
  }
  if (max_value == -std::numeric_limits<double>::infinity()) return RawLogSoftmax{};
  double sum = 0.0;
  // Summed in index order either way.
  if (weights != nullptr) {
    exp_shifted(x, n, max_value, weights);
    for (int32_t i = 0; i < n; ++i) sum += weights[i];
  } else {
    for_each_exp_block(x, n, max_value, [&](int32_t, const double* w, int32_t count) {
      for (int32_t i = 0; i < count; ++i) sum += w[i];
    });
  }
  return RawLogSoftmax{true, max_value, sum, log_inline(sum)};
}

float logprob_of(double x, const RawLogSoftmax& raw) {
  const float value = static_cast<float>((x - raw.max_value) - raw.log_sum);
  return value >= kLogprobFloor ? value : kLogprobFloor;  // also maps -inf and NaN
}

void select_top_logprobs(const double* x, int32_t n, const RawLogSoftmax& raw, int k,
                         std::vector<TokenLogprob>* out) {
  out->clear();
  if (k <= 0) return;
  const size_t limit = static_cast<size_t>(k);
  // `out` stays sorted best first; ids arrive ascending, so an equal logprob
  // never displaces an earlier (lower) id. logprob_of never decreases as x
  // grows, so once `out` is full, an x not above the last entry's x cannot
  // enter: `floor_x` skips those without computing their logprob. Until it
  // is full every entry, -inf included, takes a slot.
  double floor_x = -std::numeric_limits<double>::infinity();
  bool full = false;
  for (int32_t i = 0; i < n; ++i) {
    if (full) {
      while (i < n && !(x[i] > floor_x)) ++i;
      if (i == n) break;
    }
    const float logprob = logprob_of(x[i], raw);
    if (full && !(logprob > out->back().logprob)) continue;
    if (!full) out->push_back(TokenLogprob{});
    size_t slot = out->size() - 1;
    while (slot > 0 && logprob > (*out)[slot - 1].logprob) {
      (*out)[slot] = (*out)[slot - 1];
      --slot;
    }
    (*out)[slot] = TokenLogprob{i, logprob};
    full = out->size() == limit;
    if (full) {
      const double last_x = x[out->back().id];
      floor_x = last_x == last_x ? last_x : -std::numeric_limits<double>::infinity();  // NaN: no skipping
    }
  }
}

}  // namespace reprox::engine::internal
