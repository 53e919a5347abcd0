// Cross-instance single-flight: an instance that misses while another
// instance generates the same key waits for that result instead of
// generating again.
//
//   acquire(key) ── SET <prefix>lock:<key> <instance-id> NX PX lock_ttl,
//                   then a lookup of the key, in one round trip
//     entry found -> hit (a leader finished meanwhile; the lock is dropped)
//     OK  -> leader: generate, store (put), then release(key)
//     nil -> follower: every poll_interval, look the key up and check that
//            the lock still exists (one round trip):
//              entry found              -> hit (use it)
//              no entry, lock gone      -> try to take the lock (the leader
//                                          failed or was cancelled)
//              max_wait passed          -> generate (without the lock)
//     Redis error / breaker open -> generate
//
// release() deletes the lock only if this instance still owns it. It runs on
// the key's shard after the put, so a follower that sees the lock gone also
// sees the entry. The lock's expiry bounds how long a crashed leader blocks
// others. Callbacks run on store threads (worker or timer).
#pragma once

#include <functional>
#include <string>

#include "proxy/cache/redis/redis_store.hpp"

namespace reprox {

struct FlightLockOptions {
  std::chrono::milliseconds lock_ttl{30000};
  std::chrono::milliseconds max_wait{5000};
  std::chrono::milliseconds poll_interval{20};
};

enum class FlightLockOutcome { leader, hit, generate };
const char* to_string(FlightLockOutcome outcome);

struct FlightLockResult {
  FlightLockOutcome outcome = FlightLockOutcome::generate;
  Lookup lookup;  // the entry on hit
};

class RedisFlightLock {
 public:
  RedisFlightLock(RedisStore& store, FlightLockOptions options) : store_(store), options_(options) {}

  void acquire(const std::string& key, std::function<void(FlightLockResult)> done);
  void release(const std::string& key);

 private:
  struct Wait;
  void try_lock(std::shared_ptr<Wait> wait);
  void poll(std::shared_ptr<Wait> wait);
  void schedule_poll(std::shared_ptr<Wait> wait);

  RedisStore& store_;
  const FlightLockOptions options_;
};

}  // namespace reprox
