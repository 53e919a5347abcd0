// top-k / top-p truncation for Sampler::draw (see ../sampler.hpp, step 5).
#pragma once

#include <cstdint>

#include "engine/sampling/sampler.hpp"

namespace reprox::engine::internal {

using Candidate = SamplerScratch::Candidate;

// The kept tokens: candidates[0, size) in order (weight descending, id
// ascending), weight = exp(x - max x); total_weight is the running sum of
// their weights in that order.
struct KeptPrefix {
  int64_t size = 0;
  double total_weight = 0.0;
};

// x: (n) temperature-scaled logits, -inf = impossible; 0 < k < n.
// candidates: (n) scratch that receives the kept prefix.
KeptPrefix truncate_top_k_then_top_p(const double* x, int32_t n, int32_t k, double top_p,
                                     Candidate* candidates);

// top_p alone; max_value is the (finite) maximum of x.
KeptPrefix truncate_top_p(const double* x, int32_t n, double max_value, double top_p,
                          Candidate* candidates);

}  // namespace reprox::engine::internal
