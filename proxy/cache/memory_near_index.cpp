#include "proxy/cache/memory_near_index.hpp"

#include <algorithm>
#include <unordered_set>

#include "proxy/cache/cache_store.hpp"

namespace reprox {

MemoryNearIndex::MemoryNearIndex(size_t max_bytes) : max_bytes_(max_bytes) {}

std::string MemoryNearIndex::bucket_of(const std::string& context, uint32_t band) {
  std::string b = context;
  b.push_back('\0');
  b.append(std::to_string(band));
  return b;
}

void MemoryNearIndex::add(const std::string& context, const NearBands& bands, const NearEntry& entry,
                          std::chrono::seconds ttl) {
  Item item{context, bands, entry, now_unix_ms() + int64_t(ttl.count()) * 1000, 0};
  if (!item.entry.features)
    item.entry.features =
        std::make_shared<const policy::near::Features>(policy::near::features_of(policy::near::normalize(entry.text)));
  item.bytes = context.size() * (1 + bands.size()) + entry.key.size() + entry.text.size() + 256 +
               item.entry.features->entries.size() * sizeof(item.entry.features->entries[0]);
  if (item.bytes > max_bytes_) return;
  std::lock_guard lock(mutex_);
  // The key answered again (a refresh): the newer item replaces it. Its id
  // stays in order_ until a compaction drops the ids of gone items.
  if (auto old = by_key_.find(entry.key); old != by_key_.end()) erase_item_locked(old->second);
  if (order_.size() > 2 * items_.size() + 64)
    order_.erase(std::remove_if(order_.begin(), order_.end(), [this](uint64_t id) { return !items_.count(id); }),
                 order_.end());
  const uint64_t id = next_id_++;
  for (uint32_t band : bands) buckets_[bucket_of(context, band)].push_back(id);
  by_key_[entry.key] = id;
  order_.push_back(id);
  bytes_ += item.bytes;
  items_.emplace(id, std::move(item));
  while (bytes_ > max_bytes_ && !order_.empty()) remove_oldest_locked();
}

void MemoryNearIndex::remove_oldest_locked() {
  const uint64_t id = order_.front();
  order_.pop_front();
  erase_item_locked(id);
}

void MemoryNearIndex::erase_item_locked(uint64_t id) {
  auto it = items_.find(id);
  if (it == items_.end()) return;
  for (uint32_t band : it->second.bands) {
    auto b = buckets_.find(bucket_of(it->second.context, band));
    if (b == buckets_.end()) continue;
    auto& ids = b->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    if (ids.empty()) buckets_.erase(b);
  }
  if (auto k = by_key_.find(it->second.entry.key); k != by_key_.end() && k->second == id) by_key_.erase(k);
  bytes_ -= it->second.bytes;
  items_.erase(it);
}

void MemoryNearIndex::candidates(const std::string& context, const NearBands& bands,
                                 std::function<void(std::vector<NearEntry>)> done) {
  std::vector<NearEntry> out;
  {
    std::lock_guard lock(mutex_);
    const int64_t now = now_unix_ms();
    std::unordered_set<uint64_t> seen;
    for (uint32_t band : bands) {
      auto b = buckets_.find(bucket_of(context, band));
      if (b == buckets_.end()) continue;
      for (auto id_it = b->second.rbegin(); id_it != b->second.rend(); ++id_it) {  // newest first
        const uint64_t id = *id_it;
        if (out.size() == kMaxNearCandidates) break;
        if (!seen.insert(id).second) continue;
        auto it = items_.find(id);
        if (it == items_.end() || it->second.expires_ms <= now) continue;
        out.push_back(it->second.entry);
      }
    }
  }
  done(std::move(out));
}

size_t MemoryNearIndex::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace reprox
