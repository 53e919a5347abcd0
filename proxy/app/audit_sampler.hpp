// Which cache hits the reproducibility auditor re-generates: one in `every`.
#pragma once

#include <atomic>
#include <cstdint>

namespace reprox {

// Picks one cache hit in `every` (0: none), counting hits from any thread.
class AuditSampler {
 public:
  explicit AuditSampler(uint64_t every) : every_(every) {}
  bool pick() { return every_ != 0 && hits_.fetch_add(1, std::memory_order_relaxed) % every_ == 0; }

 private:
  const uint64_t every_;
  std::atomic<uint64_t> hits_{0};
};

}  // namespace reprox
