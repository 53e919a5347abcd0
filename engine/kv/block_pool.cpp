#include "engine/kv/block_pool.hpp"

namespace reprox::engine::kv {

BlockPool::BlockPool(int32_t num_blocks)
    : refcount_(static_cast<std::size_t>(num_blocks > 0 ? num_blocks : 0), 0),
      cached_(refcount_.size(), 0) {
  free_.reserve(refcount_.size());
  // Lowest ids on top of the stack: a fresh pool hands out 0, 1, 2, ...
  for (int32_t id = capacity() - 1; id >= 0; --id) free_.push_back(id);
}

bool BlockPool::take(int32_t n, std::vector<BlockId>* out) {
  if (n < 0 || n > free_count()) return false;
  for (int32_t i = 0; i < n; ++i) {
    BlockId id = free_.back();
    free_.pop_back();
    refcount_[static_cast<std::size_t>(id)] = 1;
    out->push_back(id);
  }
  return true;
}

bool BlockPool::ref(BlockId id) {
  if (!valid(id)) return false;
  auto i = static_cast<std::size_t>(id);
  if (refcount_[i] == 0 && !cached_[i]) return false;  // free: must come from take()
  ++refcount_[i];
  return true;
}

bool BlockPool::unref(BlockId id) {
  if (!valid(id)) return false;
  auto i = static_cast<std::size_t>(id);
  if (refcount_[i] == 0) return false;
  if (--refcount_[i] == 0 && !cached_[i]) free_.push_back(id);
  return true;
}

void BlockPool::set_cached(BlockId id, bool cached) {
  auto i = static_cast<std::size_t>(id);
  bool was = cached_[i] != 0;
  cached_[i] = cached ? 1 : 0;
  if (was && !cached && refcount_[i] == 0) free_.push_back(id);
}

}  // namespace reprox::engine::kv
