#include "proxy/cache/memory_store.hpp"

namespace reprox {

int64_t now_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

MemoryStore::MemoryStore(MemoryStoreOptions options) : options_(options) {}

Lookup MemoryStore::lookup(const std::string& key, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return {};
  auto node = it->second;
  if (node->entry.expires_unix_ms != 0 && node->entry.expires_unix_ms <= now_ms) {
    ++stats_.expirations;
    remove_locked(node);
    return {};
  }
  lru_.splice(lru_.begin(), lru_, node);
  return Lookup{LookupStatus::hit, node->entry};
}

void MemoryStore::insert(const std::string& key, std::shared_ptr<const Generation> generation,
                         std::chrono::seconds ttl, int64_t now_ms) {
  if (options_.max_bytes == 0) return;  // --cache-bytes 0: the tier is off (skips sizing every L2 hit)
  if (!generation || !generation->complete()) return;
  if (ttl.count() <= 0) ttl = options_.default_ttl;
  size_t bytes = generation->byte_size() + key.size() + sizeof(Node) + 64;
  if (bytes > options_.max_bytes) return;  // would evict everything and still not fit
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) remove_locked(it->second);
  lru_.push_front(Node{key, CacheEntry{std::move(generation), now_ms, now_ms + ttl.count() * 1000, tier()}, bytes});
  index_.emplace(lru_.front().key, lru_.begin());
  stats_.bytes += bytes;
  stats_.entries = index_.size();
  evict_locked();
}

void MemoryStore::get(const std::string& key, std::function<void(Lookup)> done) {
  done(lookup(key, now_unix_ms()));
}

void MemoryStore::put(const std::string& key, std::shared_ptr<const Generation> generation,
                      std::chrono::seconds ttl) {
  insert(key, std::move(generation), ttl, now_unix_ms());
}

void MemoryStore::erase(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) remove_locked(it->second);
}

void MemoryStore::extend(const std::string& key, std::chrono::seconds ttl) {
  const int64_t expires = now_unix_ms() + int64_t(ttl.count()) * 1000;
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return;
  CacheEntry& e = it->second->entry;
  if (e.expires_unix_ms != 0 && e.expires_unix_ms < expires) e.expires_unix_ms = expires;
}

uint64_t MemoryStore::clear() {
  std::lock_guard lock(mutex_);
  uint64_t n = index_.size();
  index_.clear();
  lru_.clear();
  stats_.bytes = 0;
  stats_.entries = 0;
  return n;
}

uint64_t MemoryStore::purge_if(const std::function<bool(const Generation&)>& match) {
  std::lock_guard lock(mutex_);
  uint64_t n = 0;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (match(*it->entry.generation)) {
      remove_locked(it);
      ++n;
    }
    it = next;
  }
  return n;
}

MemoryStoreStats MemoryStore::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void MemoryStore::remove_locked(List::iterator it) {
  stats_.bytes -= it->bytes;
  index_.erase(it->key);
  lru_.erase(it);
  stats_.entries = index_.size();
}

void MemoryStore::evict_locked() {
  while (stats_.bytes > options_.max_bytes && !lru_.empty()) {
    ++stats_.evictions;
    remove_locked(std::prev(lru_.end()));
  }
}

}  // namespace reprox
