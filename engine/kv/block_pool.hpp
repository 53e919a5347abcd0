// A pool of fixed-size KV block ids with reference counts.
//
// The pool manages ids only: the engine maps each id to the storage that
// holds block_size positions of keys and values for every layer. A block is
// in exactly one of three states:
//   free      refcount 0, not cached: on the free list, allocate() may take it;
//   held      refcount > 0: some running request reads or writes it;
//   cached    refcount 0, owned by the prefix tree: reusable, evictable.
// A held block may also be cached (a request is using a tree block).
//
// Threading: not thread-safe; one thread (the engine thread) owns a pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reprox::engine::kv {

using BlockId = int32_t;

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  int32_t capacity() const { return static_cast<int32_t>(refcount_.size()); }
  int32_t free_count() const { return static_cast<int32_t>(free_.size()); }
  bool valid(BlockId id) const { return id >= 0 && id < capacity(); }

  // Takes n free blocks, each with refcount 1, appending them to *out; false
  // (and nothing taken) when fewer than n are free. Ids come out in a fixed
  // order for a given history, so runs are repeatable.
  bool take(int32_t n, std::vector<BlockId>* out);

  int32_t refcount(BlockId id) const { return refcount_[static_cast<std::size_t>(id)]; }
  bool cached(BlockId id) const { return cached_[static_cast<std::size_t>(id)] != 0; }

  // +1 on a held or cached block; false for an invalid or free block.
  bool ref(BlockId id);
  // -1; a block that reaches 0 and is not cached goes back to the free list.
  // False (and no change) for an invalid id or a refcount already 0.
  bool unref(BlockId id);
  // Marks a block as owned (or no longer owned) by the prefix tree. Uncaching
  // a block nobody holds frees it.
  void set_cached(BlockId id, bool cached);

 private:
  std::vector<int32_t> refcount_;
  std::vector<uint8_t> cached_;
  std::vector<BlockId> free_;  // a stack: the most recently freed id is taken first
};

}  // namespace reprox::engine::kv
