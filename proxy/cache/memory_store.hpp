// The memory tier: an LRU bounded by bytes, with a TTL per entry.
// Thread-safe: every operation takes one short lock; callbacks run inline,
// outside the lock.
#pragma once

#include <list>
#include <mutex>
#include <unordered_map>

#include "proxy/cache/cache_store.hpp"

namespace reprox {

struct MemoryStoreOptions {
  size_t max_bytes = 256ull << 20;
  std::chrono::seconds default_ttl{3600};
};

struct MemoryStoreStats {
  size_t entries = 0, bytes = 0;
  uint64_t evictions = 0, expirations = 0;
};

class MemoryStore final : public CacheStore {
 public:
  explicit MemoryStore(MemoryStoreOptions options);

  void get(const std::string& key, std::function<void(Lookup)> done) override;
  void put(const std::string& key, std::shared_ptr<const Generation> generation,
           std::chrono::seconds ttl) override;
  void erase(const std::string& key) override;
  void extend(const std::string& key, std::chrono::seconds ttl) override;
  uint64_t clear() override;
  const char* tier() const override { return "memory"; }

  // Synchronous lookup for the hot path; `now_ms` injectable for tests.
  Lookup lookup(const std::string& key, int64_t now_ms);
  void insert(const std::string& key, std::shared_ptr<const Generation> generation,
              std::chrono::seconds ttl, int64_t now_ms);
  MemoryStoreStats stats() const;
  // False with max_bytes 0: insert() keeps nothing (callers can skip
  // building what they would insert).
  bool keeps_entries() const { return options_.max_bytes > 0; }
  // Removes the entries whose generation matches; returns how many.
  uint64_t purge_if(const std::function<bool(const Generation&)>& match);

 private:
  struct Node {
    std::string key;
    CacheEntry entry;
    size_t bytes = 0;
  };
  using List = std::list<Node>;  // front = most recently used

  void remove_locked(List::iterator it);
  void evict_locked();

  const MemoryStoreOptions options_;
  mutable std::mutex mutex_;
  List lru_;
  std::unordered_map<std::string_view, List::iterator> index_;  // views into Node::key
  MemoryStoreStats stats_;
};

}  // namespace reprox
