// A cache of BPE results by pre-tokenized word, in tables of fixed size.
//
// Contract:
// - Memory: every table is allocated and zeroed (so its pages are resident)
//   by the constructor; find() and put() never allocate (find() only grows
//   the caller's vector). bytes() is the whole footprint and never changes,
//   however many distinct words pass: a server's words are unbounded
//   (generated text re-sent in conversations, counters, identifiers), the
//   cache is not.
// - A slot holds one word of at most shape.max_word_bytes bytes with its
//   ids, in shape.slot_bytes bytes (the word's bytes plus 4 per id); put()
//   refuses anything larger (merging it again is the cost).
// - Set associative: a word may sit in one of the kWays slots of its set;
//   put() fills an empty one, else replaces the one found or stored least
//   recently. find() compares the whole word, never only its hash.
// - Thread-safe: the sets are spread over kShards mutexes, each held for one
//   lookup or one store.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace reprox::tok {

class WordCache {
 public:
  static constexpr size_t kWays = 4;

  struct Shape {
    size_t slots = 0;           // rounded up to a power of two, at least kWays (one set)
    size_t max_word_bytes = 0;  // at most slot_bytes
    size_t slot_bytes = 0;      // at most 65535
  };

  explicit WordCache(Shape shape);

  // Appends the ids of `word` to `out` and returns true when it is cached.
  bool find(std::string_view word, std::vector<int32_t>& out) const;
  // Caches the ids of `word` (n of them) and returns true, unless they do
  // not fit a slot.
  bool put(std::string_view word, const int32_t* ids, size_t n);

  const Shape& shape() const { return shape_; }
  size_t bytes() const;

 private:
  struct Head {
    uint64_t hash = 0;  // 0: empty (a word's hash is never 0 here)
    uint16_t word_len = 0;
    uint16_t n_ids = 0;
    uint32_t used = 0;  // the shard's clock when last found or stored
  };
  static constexpr size_t kShards = 16;

  static Shape normalized(Shape shape);
  static uint64_t hash_of(std::string_view word);
  bool holds(size_t slot, uint64_t hash, std::string_view word) const;
  // Where put() stores: the slot holding the word, else an empty one, else
  // the least recently used of the set starting at `first`.
  size_t slot_for(size_t first, uint64_t hash, std::string_view word, uint32_t clock) const;
  size_t set_of(uint64_t hash) const { return hash & (shape_.slots / kWays - 1); }

  const Shape shape_;
  const std::unique_ptr<Head[]> heads_;
  const std::unique_ptr<char[]> data_;  // slot i: [i * slot_bytes, +slot_bytes): the word, then its ids
  struct Shard {
    std::mutex mutex;
    uint32_t clock = 0;  // guarded by mutex
  };
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace reprox::tok
