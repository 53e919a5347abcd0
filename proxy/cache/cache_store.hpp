// The cache tier interface: the memory LRU, Redis and the tiered store all
// implement it and pass one conformance suite (tests/proxy/cache).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/generation.hpp"
#include "proxy/cache/stored_generation.hpp"

namespace reprox {

struct CacheEntry {
  StoredGeneration generation;  // decoded, or (Redis) decoded on first use
  int64_t stored_unix_ms = 0;   // when it was written (for `age` and max-age)
  int64_t expires_unix_ms = 0;  // 0 = never
  std::string tier;             // "memory" | "redis": which tier answered
};

enum class LookupStatus { hit, miss, error };

struct Lookup {
  LookupStatus status = LookupStatus::miss;
  CacheEntry entry;  // valid on hit
};

// Keys are the full canonical key strings (hex SHA-256 of the canonical
// request); implementations compare whole keys, never just a hash of them.
// Callbacks may run inline (memory) or on a store thread (Redis): callers
// post back to their own executor. Every call completes exactly once,
// within the store's own timeout.
// Runs a task on the caller's thread or executor (e.g. net::dispatch to an
// I/O strand).
using PostFn = std::function<void(std::function<void()>)>;

class CacheStore {
 public:
  virtual ~CacheStore() = default;
  virtual void get(const std::string& key, std::function<void(Lookup)> done) = 0;
  // Like get(), but `done` runs through `post`. A store that answers on its
  // own threads may hand over the raw answer and decode it inside `post`,
  // so that the entry is built (allocated) and freed on the caller's
  // thread: the Redis tier does, which keeps its workers' malloc arenas
  // from being grown and trimmed on every batch.
  virtual void get_on(const std::string& key, PostFn post, std::function<void(Lookup)> done) {
    get(key, [post = std::move(post), done = std::move(done)](Lookup lookup) mutable {
      post([done = std::move(done), lookup = std::move(lookup)]() mutable { done(std::move(lookup)); });
    });
  }
  // ttl 0 = the store's default TTL. Only complete generations are accepted.
  virtual void put(const std::string& key, std::shared_ptr<const Generation> generation,
                   std::chrono::seconds ttl) = 0;
  virtual void erase(const std::string& key) = 0;
  // Moves the entry's expiry to now + ttl when that is later than its
  // expiry now (hot keys); never shortens it; no-op when the key is absent.
  // Asynchronous on the Redis tier (fire and forget: PEXPIRE ... GT).
  virtual void extend(const std::string& key, std::chrono::seconds ttl) = 0;
  // Removes every entry; returns how many were removed where known.
  virtual uint64_t clear() = 0;
  virtual const char* tier() const = 0;
};

int64_t now_unix_ms();

}  // namespace reprox
