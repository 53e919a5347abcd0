// Per-tenant (per API key) limits on chat requests: how many may be in
// progress at once, and a request rate (token bucket). A request over a
// limit is refused with 429 and Retry-After before anything is looked up.
//
// admit() returns a permit that holds the tenant's concurrency slot until
// it is destroyed (the request is answered and its context released); a
// permit may outlive the limiter.
// Thread-safe: 16 shards, each a short mutex over its tenants. Bounded: a
// shard past its share of `max_tenants` forgets its idle tenants (none in
// progress), whose buckets then start full again.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "policies/token_bucket.hpp"

namespace reprox {

struct TenantLimitOptions {
  int64_t max_concurrent = 0;      // 0: no limit
  double requests_per_second = 0;  // 0: no limit
  double burst = 0;                // 0: requests_per_second (at least 1)
  size_t max_tenants = 1 << 16;
};

class TenantLimiter {
 public:
  enum class Refusal { none, concurrency, rate };
  struct Admission {
    std::shared_ptr<void> permit;  // held while the request is in progress; null when refused
    Refusal refusal = Refusal::none;
    int64_t retry_after_s = 0;
  };

  explicit TenantLimiter(TenantLimitOptions options);
  bool enabled() const { return options_.max_concurrent > 0 || options_.requests_per_second > 0; }
  Admission admit(const std::string& tenant);

 private:
  struct State {
    int64_t in_flight = 0;
    policy::TokenBucket bucket;
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, State> tenants;
  };
  static constexpr size_t kShards = 16;
  using Shards = std::array<Shard, kShards>;
  static void release(Shard& shard, const std::string& tenant);
  static void forget_idle_locked(Shard& shard);

  const TenantLimitOptions options_;
  // Shared with the permits: one may outlive the limiter at shutdown.
  const std::shared_ptr<Shards> shards_ = std::make_shared<Shards>();
};

}  // namespace reprox
