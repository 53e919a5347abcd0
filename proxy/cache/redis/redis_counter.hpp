// Counts the Redis tier for reprox_cache_entries{tier="redis"} and
// reprox_cache_bytes{tier="redis"}: a background pass of SCAN steps over
// the key prefix, run on the store's threads (never an I/O thread).
//
// Semantics: entries and bytes (value lengths, not Redis's own overhead)
// of every live entry under the prefix, written by any instance sharing
// that Redis, as of the last completed pass. A pass starts `interval` after
// the previous one ended; its steps (`step_keys` keys each, one Lua call)
// run one at a time, `step_gap` apart, so Redis is never busy with it for
// long. A step also deletes entries that a purge made stale (the
// "background SCAN" reclaim). Until the first pass completes, and while
// Redis is down, snapshot() keeps the last values (complete = false before
// the first pass).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "proxy/cache/redis/redis_store.hpp"

namespace reprox {

struct RedisCounterOptions {
  std::chrono::milliseconds interval{10000};  // 0: never count
  std::chrono::milliseconds step_gap{2};
  size_t step_keys = 200;
};

struct RedisTierCount {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t reclaimed_total = 0;  // stale entries deleted by this counter
  uint64_t passes = 0;           // completed passes
};

class RedisTierCounter {
 public:
  // `store` outlives the counter.
  RedisTierCounter(RedisStore& store, RedisCounterOptions options);
  ~RedisTierCounter();
  RedisTierCounter(const RedisTierCounter&) = delete;
  RedisTierCounter& operator=(const RedisTierCounter&) = delete;

  RedisTierCount snapshot() const;  // any thread, never blocks

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace reprox
