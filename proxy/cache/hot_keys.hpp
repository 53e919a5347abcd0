// Hot keys: counts the cache hits of each key and says when a hit makes the
// key hot (policy::record_hit), and for how long its entry should then live
// (policy::hot_ttl_seconds). The caller extends the entry in its store
// (CacheStore::extend), which on the Redis tier is one PEXPIRE sent by the
// instance that counted the hits, not waited for.
//
// Counts are per instance: with several instances behind one Redis, each
// extends by what it sees.
//
// Thread-safe: 16 shards, each a short mutex around a hash map. Bounded: at
// most `max_keys` counters in all; a full shard forgets its counters (they
// start again from zero) rather than grow.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "policies/cache_rules.hpp"

namespace reprox {

class HotKeys {
 public:
  explicit HotKeys(policy::HotKeyPolicy policy, size_t max_keys = 1 << 16);

  bool enabled() const { return policy_.hits > 0; }
  // Counts a hit of `key` at `now_ms`. Returns the entry's new lifetime
  // from now, in seconds, when this hit extends it, else 0. `base_ttl_s`
  // is the TTL the request's rule gives; `max_ttl_s` its rule's cap.
  int64_t on_hit(const std::string& key, int64_t base_ttl_s, int64_t max_ttl_s, int64_t now_ms);
  // Forgets every counter (a purge of everything).
  void clear();

 private:
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, policy::HotCounter> counters;
  };
  static constexpr size_t kShards = 16;
  const policy::HotKeyPolicy policy_;
  const size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace reprox
