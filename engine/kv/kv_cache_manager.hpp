// KV cache manager: a pool of fixed-size KV blocks plus a radix tree, salted
// by tenant, that keeps the blocks of finished sequences for reuse by later
// requests (conversation-level prefix reuse).
//
// Only FULL blocks are cached and shared. A request's partial last block is
// its own and is never inserted, so no request ever writes into a block that
// another request can read (no copy-on-write needed). The cost: up to
// block_size - 1 tokens at the end of a cached sequence are recomputed by the
// next turn. Exactness does not depend on the block size because the kernels
// are row- and batch-invariant.
//
// Lifecycle of one request, all on the engine thread:
//   PrefixMatch m = acquire_prefix(tenant, tokens);  // locks m.blocks, counts reuse
//   auto fresh = allocate(blocks_needed - m.blocks.size());  // refcount 1 each
//   ... compute tokens [m.cached_tokens, ...) into m.blocks ++ fresh ...
//   insert(tenant, tokens_with_kv, table);  // keep prompt + completion for the next turn
//   unlock(table);                          // the request lets go of every block
// Cancellation or preemption is just unlock(table) (optionally insert first).
//
// Tenants: each tenant salt has its own root; identical token sequences under
// two salts share no node and no block, so tenant B's match of tenant A's
// prefix is always 0.
//
// Memory: the engine has storage for config.pool_blocks blocks. Cached blocks
// are capped by cache_budget_bytes / bytes_per_block; blocks held by running
// requests are limited only by the pool. cache_budget_bytes == 0 turns reuse
// off: matches are empty and insert keeps nothing.
//
// Eviction: least recently used leaf first (a logical clock, so the order is
// repeatable); a held block is never evicted. From a leaf it removes the
// trailing blocks nobody holds (the whole leaf when none is held; a request
// holding a prefix of an edge keeps just that prefix). It runs when
// allocate() is short of free blocks, when the cache is over its budget
// (after insert and unlock), and per tenant when a tenant holds more than
// max_conversations_per_tenant conversation leaves (its least recently used
// conversation not in use goes first; if all are in use, the tenant may hold
// more until the least recently used one is released). A conversation is a leaf of the tenant's tree: a later
// turn extends its conversation's leaf, so it takes no new slot.
//
// Threading: not thread-safe. One thread (the engine thread) owns the
// manager and makes every call; publish counters() to other threads by copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/kv/block_pool.hpp"

namespace reprox::engine::kv {

namespace internal {
class PrefixTree;
}

struct KvConfig {
  int32_t block_size = 16;          // tokens per block
  int64_t bytes_per_block = 0;      // KV bytes of one block over all layers, keys and values
  int32_t pool_blocks = 0;          // block ids the engine has storage for (running + cached)
  int64_t cache_budget_bytes = 0;   // KV kept for reuse across requests; 0 = reuse off
  int32_t max_conversations_per_tenant = 10;

  int32_t cache_budget_blocks() const;
};

// "" when valid, else what is wrong: block_size >= 1, bytes_per_block >= 1,
// pool_blocks >= 1, cache_budget_bytes >= 0, max_conversations_per_tenant >= 1.
std::string validate_kv_config(const KvConfig& config);

struct PrefixMatch {
  int64_t cached_tokens = 0;         // blocks.size() * block_size
  std::vector<BlockId> blocks;       // KV of tokens [0, cached_tokens), in order
  int32_t unreferenced_blocks = 0;   // of `blocks`, those nobody held at match time
};

struct KvCounters {
  uint64_t lookups = 0;              // acquire_prefix calls
  uint64_t hits = 0;                 // ... that reused at least one block
  uint64_t reused_tokens = 0;        // sum of acquire_prefix cached_tokens
  uint64_t inserted_blocks = 0;      // blocks the cache adopted
  uint64_t evictions = 0;            // tree leaves evicted (LRU, budget or slot limit)
  uint64_t evicted_blocks = 0;       // blocks those evictions uncached
  uint64_t slot_evictions = 0;       // conversations evicted by the per-tenant limit
  int32_t cached_blocks = 0;         // blocks in the tree now
  int64_t bytes_held = 0;            // cached_blocks * bytes_per_block
  int32_t free_blocks = 0;           // on the free list now
  int32_t pool_blocks = 0;
};

class KvCacheManager {
 public:
  // Throws std::invalid_argument naming the problem (load time only).
  explicit KvCacheManager(const KvConfig& config);
  ~KvCacheManager();
  KvCacheManager(const KvCacheManager&) = delete;
  KvCacheManager& operator=(const KvCacheManager&) = delete;

  const KvConfig& config() const { return config_; }
  bool reuse_enabled() const { return budget_blocks_ > 0; }

  // Longest prefix of `tokens` cached for `tenant`, in whole blocks, leaving at
  // least one token of `tokens` uncovered (the engine needs the logits of the
  // last position, and a request never writes into a shared block). Touches
  // the matched path for LRU; locks nothing and counts nothing.
  PrefixMatch match_prefix(const std::string& tenant, const std::vector<int32_t>& tokens);
  // match_prefix, then lock(blocks), and count the lookup and reused tokens.
  // Call once when a request is admitted.
  PrefixMatch acquire_prefix(const std::string& tenant, const std::vector<int32_t>& tokens);

  // +1 / -1 on each block's refcount. A block that is neither held nor cached
  // cannot be locked. A block whose refcount drops to 0 stays cached if the
  // tree owns it, otherwise it is free again. False (and nothing changed) if
  // any id is invalid or the operation would be a misuse.
  bool lock(const std::vector<BlockId>& blocks);
  bool unlock(const std::vector<BlockId>& blocks);

  // n fresh blocks, refcount 1 each, evicting LRU unreferenced leaves when the
  // free list is short; nullopt (nothing taken, nothing evicted) when even
  // eviction could not make room.
  std::optional<std::vector<BlockId>> allocate(int32_t n);
  // Blocks allocate() could hand out now: free + evictable.
  int32_t allocatable_blocks() const;

  // Keeps the first tokens.size() / block_size full blocks of a sequence whose
  // KV is in `blocks` (the request's block table, position order; it may be
  // longer). `tokens` must be tokens whose KV has been computed (for an
  // answer: prompt + completion without the last sampled token). Positions
  // already cached keep the cached block; the others adopt the request's
  // blocks, which the caller still holds and unlocks as usual. Then enforces
  // the per-tenant conversation limit and the byte budget. Returns the
  // number of blocks adopted. No-op when reuse is off.
  int32_t insert(const std::string& tenant, const std::vector<int32_t>& tokens, const std::vector<BlockId>& blocks);

  // Blocks of `table` that only this holder references (refcount 1): what
  // unlock(table) would make allocatable (SequenceState::releasable_blocks).
  int32_t exclusive_blocks(const std::vector<BlockId>& table) const;

  // Conversation leaves `tenant` holds in the cache.
  int32_t conversations(const std::string& tenant) const;
  KvCounters counters() const;

 private:
  void enforce_budget();
  // At insert: evicts the tenant's least recently used conversations not in
  // use, never `keep` (the one just inserted). On unlock (strict_lru): only
  // while the least recently used one is free, so finishing a newer
  // conversation never evicts it in favour of an older one still in use.
  void enforce_slots(const std::string& tenant, const void* keep, bool strict_lru = false);
  void count_eviction(int32_t blocks);

  KvConfig config_;
  int32_t budget_blocks_ = 0;
  BlockPool pool_;
  std::unique_ptr<internal::PrefixTree> tree_;
  KvCounters counters_;
  std::set<std::string> over_slot_limit_;  // tenants whose extra conversations were in use
};

}  // namespace reprox::engine::kv
