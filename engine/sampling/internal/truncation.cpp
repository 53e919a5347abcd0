#include "engine/sampling/internal/truncation.hpp"

#include <algorithm>
#include <limits>

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/sampling/internal/exp_batch.hpp"

namespace reprox::engine::internal {
namespace {

// The sampler's total order: larger weight first, then lower id. Any selection
// algorithm that respects it yields the same sets and sequences.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.weight > b.weight || (a.weight == b.weight && a.id < b.id);
}

// Below this many kept tokens a bounded heap beats nth_element.
constexpr int32_t kHeapSelectLimit = 8192;

// Weights below this (relative to the top token's 1.0) form the second tier of
// the top-p search; they are ranked only if the first tier does not reach the
// nucleus mass.
constexpr double kTopPFirstTierWeight = 0x1.0p-14;

// The first k tokens of x under ranks_before (weight = x), unordered, at
// candidates[0, returned count). Skips -inf.
int64_t select_top_k(const double* x, int32_t n, int32_t k, Candidate* candidates) {
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  int64_t count = 0;
  if (k > kHeapSelectLimit) {
    for (int32_t i = 0; i < n; ++i) {
      if (x[i] != minus_infinity) candidates[count++] = Candidate{x[i], i};
    }
    if (count > k) {
      std::nth_element(candidates, candidates + k, candidates + count, ranks_before);
      count = k;
    }
    return count;
  }
  // Max-heap under ranks_before: its front is the worst kept token.
  for (int32_t i = 0; i < n; ++i) {
    if (x[i] == minus_infinity) continue;
    const Candidate candidate{x[i], i};
    if (count < k) {
      candidates[count++] = candidate;
      std::push_heap(candidates, candidates + count, ranks_before);
    } else if (ranks_before(candidate, candidates[0])) {
      std::pop_heap(candidates, candidates + count, ranks_before);
      candidates[count - 1] = candidate;
      std::push_heap(candidates, candidates + count, ranks_before);
    }
  }
  return count;
}

// Ranks [begin, end) chunk by chunk and accumulates weights into *running
// until it reaches threshold. Returns the kept size if reached, else -1 (with
// [begin, end) fully ranked and summed).
int64_t walk_ranked(Candidate* candidates, int64_t begin, int64_t end, double threshold,
                    double* running) {
  int64_t position = begin;
  int64_t chunk = 64;
  while (position < end) {
    const int64_t chunk_end = std::min(end, position + chunk);
    if (chunk_end < end) {
      std::nth_element(candidates + position, candidates + chunk_end, candidates + end,
                       ranks_before);
    }
    std::sort(candidates + position, candidates + chunk_end, ranks_before);
    for (int64_t j = position; j < chunk_end; ++j) {
      *running += candidates[j].weight;
      if (*running >= threshold) return j + 1;
    }
    position = chunk_end;
    chunk *= 4;
  }
  return -1;
}

}  // namespace

KeptPrefix truncate_top_k_then_top_p(const double* x, int32_t n, int32_t k, double top_p,
                                     Candidate* candidates) {
  const int64_t count = select_top_k(x, n, k, candidates);
  if (count == 0) return KeptPrefix{};
  double max_value = candidates[0].weight;
  for (int64_t j = 1; j < count; ++j) max_value = std::max(max_value, candidates[j].weight);
  for (int64_t j = 0; j < count; ++j) {
    candidates[j].weight = exp_inline(candidates[j].weight - max_value);
  }
  std::sort(candidates, candidates + count, ranks_before);

  double total = 0.0;
  for (int64_t j = 0; j < count; ++j) total += candidates[j].weight;
  if (top_p >= 1.0) return KeptPrefix{count, total};

  const double threshold = top_p * total;
  double running = 0.0;
  for (int64_t j = 0; j < count; ++j) {
    running += candidates[j].weight;
    if (running >= threshold) return KeptPrefix{j + 1, running};
  }
  return KeptPrefix{count, running};
}

KeptPrefix truncate_top_p(const double* x, int32_t n, double max_value, double top_p,
                          Candidate* candidates) {
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  // First tier fills candidates from the front, second tier from the back.
  int64_t first_tier = 0;
  int64_t second_tier = 0;
  double total = 0.0;  // over all tokens, in id order
  for_each_exp_block(x, n, max_value, [&](int32_t begin, const double* block, int32_t count) {
    for (int32_t b = 0; b < count; ++b) {
      const int32_t i = begin + b;
      if (x[i] == minus_infinity) continue;
      const double weight = block[b];
      total += weight;
      if (weight >= kTopPFirstTierWeight) {
        candidates[first_tier++] = Candidate{weight, i};
      } else {
        candidates[n - 1 - second_tier++] = Candidate{weight, i};
      }
    }
  });
  const double threshold = top_p * total;
  double running = 0.0;
  int64_t kept = walk_ranked(candidates, 0, first_tier, threshold, &running);
  if (kept >= 0) return KeptPrefix{kept, running};

  // Every second-tier weight ranks after every first-tier weight, so the
  // ranking simply continues behind the first tier.
  if (first_tier != n - second_tier) {
    std::move(candidates + (n - second_tier), candidates + n, candidates + first_tier);
  }
  const int64_t all = first_tier + second_tier;
  kept = walk_ranked(candidates, first_tier, all, threshold, &running);
  if (kept >= 0) return KeptPrefix{kept, running};
  return KeptPrefix{all, running};
}

}  // namespace reprox::engine::internal
