// Reproducibility audit rules: which cache hits are re-generated, and when a
// re-generation counts as the same answer as the cached one.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "proxy/cache/generation.hpp"

namespace reprox::policy {

// True when `a` and `b` are the same answer: per choice the same text, the
// same other delta members (tool calls), the same logprobs and the same
// finish_reason, plus the same system_fingerprint and token counts. How the
// text was cut into stream chunks and usage.cached_tokens (KV reuse) are not
// part of the answer. On a difference, `why` (when given) names the first one.
bool same_answer(const Generation& a, const Generation& b, std::string* why = nullptr);

// Picks one cache hit in `every` (0: none), counting hits from any thread.
class AuditSampler {
 public:
  explicit AuditSampler(uint64_t every) : every_(every) {}
  bool pick() { return every_ != 0 && hits_.fetch_add(1, std::memory_order_relaxed) % every_ == 0; }

 private:
  const uint64_t every_;
  std::atomic<uint64_t> hits_{0};
};

}  // namespace reprox::policy
