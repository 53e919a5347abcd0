// Memory L1 in front of Redis L2.
//
// get: L1 first (answers tier "memory"); on an L1 miss, L2 (tier "redis"),
// and an L2 hit fills L1 with the entry's remaining TTL and original store
// time. put/erase go to both (L1 at once, L2 asynchronously). When Redis
// fails, L2 answers misses and skips writes (see RedisStore): the tiered
// store keeps serving from L1.
//
// Purges: purge() drops the matching L1 entries at once and bumps the
// scope's epoch in Redis. Other instances drop their whole L1 when they see
// epoch:seq change (every L2 lookup reads it; an idle poll reads it every
// `epoch_poll`), so an L1 entry may outlive a purge elsewhere by at most that
// poll interval. An L2 answer that was checked before a purge seen since is
// not copied into L1.
// Thread-safe; callbacks as RedisStore's (inline for L1 hits).
#pragma once

#include "proxy/cache/memory_store.hpp"
#include "proxy/cache/redis/redis_store.hpp"

namespace reprox {

class TieredStore final : public CacheStore {
 public:
  // Both outlive the tiered store. Installs itself as l2's epoch listener.
  TieredStore(MemoryStore& l1, RedisStore& l2);
  ~TieredStore() override;

  void get(const std::string& key, std::function<void(Lookup)> done) override;
  // L1 hits answer inline; L2 answers are decoded (and fill L1) in `post`.
  void get_on(const std::string& key, PostFn post, std::function<void(Lookup)> done) override;
  void put(const std::string& key, std::shared_ptr<const Generation> generation,
           std::chrono::seconds ttl) override;
  void erase(const std::string& key) override;
  void extend(const std::string& key, std::chrono::seconds ttl) override;
  // Clears L1 and bumps epoch:all (blocks up to the command timeout);
  // returns the number of L1 entries removed.
  uint64_t clear() override;
  const char* tier() const override { return "tiered"; }

  // Drops matching L1 entries now, then bumps the epoch in Redis; done(n, ok)
  // gets the L1 count and whether Redis took the bump (false: other
  // instances still serve the old entries until Redis is back and purged
  // again). Runs `done` on a store thread.
  void purge(const PurgeScope& scope, std::function<void(uint64_t l1_removed, bool redis_ok)> done);

  // "ok" or "degraded" (Redis breaker not closed), for /healthz.
  std::string health() const { return l2_.healthy() ? "ok" : "degraded"; }
  MemoryStore& l1() { return l1_; }
  RedisStore& l2() { return l2_; }

 private:
  MemoryStore& l1_;
  RedisStore& l2_;
};

}  // namespace reprox
