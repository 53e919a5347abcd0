// The candidate index of near-duplicate matching: which cached entries
// answered a request of a given context key (policy::near_query), and the
// LSH bands of their last user message (policy::near::band_keys).
//
// An index entry only names an exact key and its text: a candidate is
// served only after the cache store returns that key's entry, so purges,
// TTLs and evictions of the store apply to near-hits as they do to hits.
// The index forgets entries by TTL (and, in memory, by its byte budget).
//
// Implementations: MemoryNearIndex (one process) and RedisNearIndex (shared
// by every instance on one Redis; buckets are Redis sets beside the entries).
// Thread-safe; `done` runs exactly once, on any thread (callers post).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policies/near_text.hpp"

namespace reprox {

using NearBands = std::array<uint32_t, policy::near::kBands>;

struct NearEntry {
  std::string key;   // the exact key of a cached entry
  std::string text;  // the last user message it answered
  // Its features, when the index keeps them (in memory); else null and the
  // matcher computes them from `text`.
  std::shared_ptr<const policy::near::Features> features;
};

// The most candidates one lookup returns: scoring is bounded per miss.
inline constexpr size_t kMaxNearCandidates = 512;

class NearIndex {
 public:
  virtual ~NearIndex() = default;
  virtual void add(const std::string& context, const NearBands& bands, const NearEntry& entry,
                   std::chrono::seconds ttl) = 0;
  // The entries of `context` that share at least one band with `bands`.
  virtual void candidates(const std::string& context, const NearBands& bands,
                          std::function<void(std::vector<NearEntry>)> done) = 0;
};

}  // namespace reprox
