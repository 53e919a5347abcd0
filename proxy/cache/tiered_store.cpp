#include "proxy/cache/tiered_store.hpp"

namespace reprox {

TieredStore::TieredStore(MemoryStore& l1, RedisStore& l2) : l1_(l1), l2_(l2) {
  l2_.set_epoch_listener([this](uint64_t) { l1_.clear(); });
}

TieredStore::~TieredStore() { l2_.set_epoch_listener(nullptr); }

void TieredStore::get(const std::string& key, std::function<void(Lookup)> done) {
  get_on(key, nullptr, std::move(done));
}

void TieredStore::get_on(const std::string& key, PostFn post, std::function<void(Lookup)> done) {
  Lookup local = l1_.lookup(key, now_unix_ms());
  if (local.status == LookupStatus::hit) {
    if (!post) return done(std::move(local));
    return post([done = std::move(done), local = std::move(local)]() mutable { done(std::move(local)); });
  }
  // The key is kept only for the L1 fill (a copy per lookup otherwise).
  std::string fill_key = l1_.keeps_entries() ? key : std::string();
  l2_.get_checked_on(key, std::move(post), [this, key = std::move(fill_key), done = std::move(done)](Lookup lookup,
                                                                                                 uint64_t seq) {
    if (lookup.status == LookupStatus::hit && seq == l2_.epoch_seq()) {
      const CacheEntry& e = lookup.entry;
      int64_t now = now_unix_ms();
      int64_t remaining_ms = e.expires_unix_ms == 0 ? 0 : e.expires_unix_ms - now;
      // The L1 copy is the decoded generation (an L2 hit arrives encoded):
      // without an L1, nothing is decoded.
      if (remaining_ms > 0 && l1_.keeps_entries()) {
        // Keep the original store time (for `age`); the TTL was whole
        // seconds, so rounding recovers it and L1 expires with L2.
        int64_t ttl_s = std::max<int64_t>(1, (e.expires_unix_ms - e.stored_unix_ms + 500) / 1000);
        l1_.insert(key, e.generation.shared(), std::chrono::seconds(ttl_s), e.stored_unix_ms);
      }
    }
    done(std::move(lookup));
  });
}

void TieredStore::put(const std::string& key, std::shared_ptr<const Generation> generation,
                      std::chrono::seconds ttl) {
  if (!generation || !generation->complete()) return;
  l1_.put(key, generation, ttl);
  l2_.put(key, std::move(generation), ttl);
}

void TieredStore::erase(const std::string& key) {
  l1_.erase(key);
  l2_.erase(key);
}

void TieredStore::extend(const std::string& key, std::chrono::seconds ttl) {
  l1_.extend(key, ttl);
  l2_.extend(key, ttl);
}

uint64_t TieredStore::clear() {
  uint64_t n = l1_.clear();
  l2_.clear();
  return n;
}

void TieredStore::purge(const PurgeScope& scope, std::function<void(uint64_t, bool)> done) {
  uint64_t removed = 0;
  switch (scope.kind) {
    case PurgeScope::Kind::all: removed = l1_.clear(); break;
    case PurgeScope::Kind::model:
      removed = l1_.purge_if([&](const Generation& g) { return g.model == scope.name; });
      break;
    case PurgeScope::Kind::ns:
      removed = l1_.purge_if([&](const Generation& g) { return g.ns == scope.name; });
      break;
  }
  l2_.purge(scope, [removed, done = std::move(done)](bool ok) {
    if (done) done(removed, ok);
  });
}

}  // namespace reprox
