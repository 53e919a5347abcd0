// The near-duplicate candidate index in Redis, beside the entries, so that
// a near-hit works across instances. Layout (prefix "reprox:v1:"):
//   <prefix>near:<context>:<band>   a set of exact keys, PEXPIRE the entry's TTL
//   <prefix>neartext:<key>          the last user message that key answered, same TTL
// A bucket set lives as long as its newest member's TTL; members whose
// text has expired are dropped when read. Purges need nothing here: a
// candidate is served only if the store still returns its entry.
//
// Only exact misses of requests under a rule with near matching read it:
// one script call (EVAL) per such miss; an exact hit never touches it.
// Failures (Redis down, breaker open) answer no candidates.
#pragma once

#include "proxy/cache/near_index.hpp"
#include "proxy/cache/redis/redis_store.hpp"

namespace reprox {

class RedisNearIndex final : public NearIndex {
 public:
  explicit RedisNearIndex(RedisStore& store) : store_(store) {}

  void add(const std::string& context, const NearBands& bands, const NearEntry& entry,
           std::chrono::seconds ttl) override;
  void candidates(const std::string& context, const NearBands& bands,
                  std::function<void(std::vector<NearEntry>)> done) override;

 private:
  std::string bucket_key(const std::string& context, uint32_t band) const;
  RedisStore& store_;
};

}  // namespace reprox
