// The last chat requests, for the status page (GET /reprox/v1/stats): a
// bounded ring, newest first on read. An entry holds only what an operator
// may see of a request: when it arrived, the first 8 hex digits of its
// tenant, the first 16 of its cache key, the HTTP status, the cache status,
// the tier and the latency. Never prompt text, never tokens.
//
// Contract: record() keeps at most `capacity` entries (50 by default); a
// new entry pushes out the oldest. newest_first() returns a copy, newest
// first. Longer strings are cut to the field's size, so record() never
// allocates.
//
// Threading: thread-safe. record() runs on the I/O threads once per chat
// answer (the hit path too): one short lock around a copy of ~80 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace reprox {

struct RecentRequest {
  int64_t time_ms = 0;      // arrival, unix milliseconds
  double latency_ms = 0;    // until the answer was complete (or failed)
  int status = 0;           // HTTP status
  char tenant[9] = {};      // tenant hash prefix (8 hex); "" when shared or anonymous
  char key[17] = {};        // cache key prefix (16 hex); "" for a request refused before it had a key
  char cache[12] = {};      // hit | near-hit | miss | bypass | coalesced | error
  char tier[8] = {};        // memory | redis | "" (generated)
};

class RecentRequests {
 public:
  static constexpr size_t kDefaultCapacity = 50;

  explicit RecentRequests(size_t capacity = kDefaultCapacity);

  void record(int64_t time_ms, double latency_ms, std::string_view tenant, std::string_view key, int status,
              std::string_view cache, std::string_view tier);
  std::vector<RecentRequest> newest_first() const;
  size_t capacity() const { return ring_.size(); }

 private:
  mutable std::mutex mutex_;
  std::vector<RecentRequest> ring_;  // fixed size
  size_t next_ = 0;                  // the slot the next entry goes to
  size_t size_ = 0;                  // entries held, up to ring_.size()
};

}  // namespace reprox
