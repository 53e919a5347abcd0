#include "engine/tokenizer/word_cache.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace reprox::tok {

WordCache::Shape WordCache::normalized(Shape s) {
  size_t slots = kWays;
  while (slots < s.slots) slots <<= 1;
  s.slots = slots;
  s.slot_bytes = std::min<size_t>(s.slot_bytes, UINT16_MAX);
  s.max_word_bytes = std::min(s.max_word_bytes, s.slot_bytes);
  return s;
}

WordCache::WordCache(Shape shape)
    : shape_(normalized(shape)),
      heads_(new Head[shape_.slots]()),
      data_(new char[shape_.slots * shape_.slot_bytes]()) {}

size_t WordCache::bytes() const { return shape_.slots * (sizeof(Head) + shape_.slot_bytes); }

uint64_t WordCache::hash_of(std::string_view word) {
  const uint64_t h = std::hash<std::string_view>{}(word);
  return h ? h : 1;
}

bool WordCache::holds(size_t slot, uint64_t hash, std::string_view word) const {
  const Head& h = heads_[slot];
  return h.hash == hash && h.word_len == word.size() &&
         std::memcmp(&data_[slot * shape_.slot_bytes], word.data(), word.size()) == 0;
}

size_t WordCache::slot_for(size_t first, uint64_t hash, std::string_view word, uint32_t clock) const {
  for (size_t s = first; s < first + kWays; ++s)
    if (holds(s, hash, word)) return s;  // another thread merged it meanwhile
  for (size_t s = first; s < first + kWays; ++s)
    if (heads_[s].hash == 0) return s;
  size_t lru = first;  // ages are clock distances, so the clock may wrap
  for (size_t s = first + 1; s < first + kWays; ++s)
    if (clock - heads_[s].used > clock - heads_[lru].used) lru = s;
  return lru;
}

bool WordCache::find(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty() || word.size() > shape_.max_word_bytes) return false;
  const uint64_t hash = hash_of(word);
  const size_t first = set_of(hash) * kWays;
  Shard& shard = shards_[set_of(hash) % kShards];
  std::lock_guard lock(shard.mutex);
  for (size_t slot = first; slot < first + kWays; ++slot) {
    if (!holds(slot, hash, word)) continue;
    const size_t at = out.size(), n = heads_[slot].n_ids;
    out.resize(at + n);
    if (n) std::memcpy(&out[at], &data_[slot * shape_.slot_bytes + word.size()], n * sizeof(int32_t));
    heads_[slot].used = ++shard.clock;
    return true;
  }
  return false;
}

bool WordCache::put(std::string_view word, const int32_t* ids, size_t n) {
  if (word.empty() || word.size() > shape_.max_word_bytes || word.size() + n * sizeof(int32_t) > shape_.slot_bytes)
    return false;
  const uint64_t hash = hash_of(word);
  const size_t first = set_of(hash) * kWays;
  Shard& shard = shards_[set_of(hash) % kShards];
  std::lock_guard lock(shard.mutex);
  const size_t slot = slot_for(first, hash, word, shard.clock);
  Head& h = heads_[slot];
  h.hash = hash;
  h.word_len = uint16_t(word.size());
  h.n_ids = uint16_t(n);
  h.used = ++shard.clock;
  char* data = &data_[slot * shape_.slot_bytes];
  std::memcpy(data, word.data(), word.size());
  if (n) std::memcpy(data + word.size(), ids, n * sizeof(int32_t));
  return true;
}

}  // namespace reprox::tok
