// The near-duplicate candidate index in memory, bounded by bytes: past the
// budget the oldest additions go first. A single mutex; candidates() runs
// `done` inline.
#pragma once

#include <deque>
#include <mutex>
#include <unordered_map>

#include "proxy/cache/near_index.hpp"

namespace reprox {

class MemoryNearIndex final : public NearIndex {
 public:
  explicit MemoryNearIndex(size_t max_bytes = 16u << 20);  // 0 keeps nothing

  void add(const std::string& context, const NearBands& bands, const NearEntry& entry,
           std::chrono::seconds ttl) override;
  void candidates(const std::string& context, const NearBands& bands,
                  std::function<void(std::vector<NearEntry>)> done) override;
  size_t bytes() const;

 private:
  struct Item {
    std::string context;
    NearBands bands{};
    NearEntry entry;
    int64_t expires_ms = 0;
    size_t bytes = 0;
  };
  // Bucket key: context + '\0' + band value.
  static std::string bucket_of(const std::string& context, uint32_t band);
  void remove_oldest_locked();
  void erase_item_locked(uint64_t id);  // from items_, its buckets and by_key_

  const size_t max_bytes_;
  mutable std::mutex mutex_;
  uint64_t next_id_ = 0;
  std::deque<uint64_t> order_;                      // ids, oldest first
  std::unordered_map<uint64_t, Item> items_;
  std::unordered_map<std::string, uint64_t> by_key_;  // exact key -> id (one item per key)
  std::unordered_map<std::string, std::vector<uint64_t>> buckets_;
  size_t bytes_ = 0;
};

}  // namespace reprox
