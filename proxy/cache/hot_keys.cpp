#include "proxy/cache/hot_keys.hpp"

#include <functional>

namespace reprox {

HotKeys::HotKeys(policy::HotKeyPolicy policy, size_t max_keys)
    : policy_(policy), max_per_shard_(std::max<size_t>(1, max_keys / kShards)) {}

int64_t HotKeys::on_hit(const std::string& key, int64_t base_ttl_s, int64_t max_ttl_s, int64_t now_ms) {
  if (!enabled() || base_ttl_s <= 0) return 0;
  Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
  std::lock_guard lock(shard.mutex);
  auto it = shard.counters.find(key);
  if (it == shard.counters.end()) {
    if (shard.counters.size() >= max_per_shard_) shard.counters.clear();
    it = shard.counters.emplace(key, policy::HotCounter{}).first;
  }
  if (!policy::record_hit(it->second, now_ms, policy_)) return 0;
  int64_t ttl = policy::hot_ttl_seconds(base_ttl_s, it->second.steps, max_ttl_s);
  return ttl > base_ttl_s ? ttl : 0;  // a rule whose max_ttl is its ttl never extends
}

void HotKeys::clear() {
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mutex);
    s.counters.clear();
  }
}

}  // namespace reprox
