// Conversation-level KV reuse for the engine: a pool of KV blocks
// (torch storage) whose ids a kv::KvCacheManager hands out and keeps in its
// tenant-salted prefix tree.
//
// Storage: per layer, K and V pools [pool_blocks, n_kv_heads, block_size,
// head_dim] in the model's KV dtype and device; block id b is row b. A job
// still computes into its own contiguous KvCache ([n_kv_heads, capacity,
// head_dim] per layer): copy_prefix() copies the matched blocks into positions
// [0, cached_tokens) of it, keep() copies the full blocks of a finished
// sequence out of it.
//
// Exactness: a reused position holds the bits a fresh prefill would compute
// only when the forward pass is row- and batch-invariant (the strict
// kernels); otherwise reuse changes low-order bits of later logits.
//
// Threading: not thread-safe; the engine thread makes every call.
// counters() is a plain copy the engine publishes to other threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "engine/kv/kv_cache_manager.hpp"
#include "engine/model/model.hpp"

namespace reprox::engine {

struct KvReuseOptions {
  int64_t budget_bytes = 0;  // KV kept across requests; under one block turns reuse off
  int32_t block_size = 16;
  int32_t max_conversations_per_tenant = 10;
};

class KvReuse {
 public:
  // `layout`: an empty cache from Model::new_cache, giving layers, heads,
  // head_dim, dtype and device. Throws std::invalid_argument on a bad layout.
  KvReuse(const KvCache& layout, const KvReuseOptions& options);
  ~KvReuse();
  KvReuse(const KvReuse&) = delete;
  KvReuse& operator=(const KvReuse&) = delete;

  bool enabled() const { return manager_ != nullptr; }
  // KV bytes of one token over all layers, keys and values.
  int64_t bytes_per_token() const { return bytes_per_token_; }

  // Tokens of `tokens` that copy_prefix() would find cached now (whole blocks,
  // at least one token left over); locks and counts nothing. 0 when off.
  int64_t cached_prefix(const std::string& tenant, const std::vector<int32_t>& tokens);

  // Copies the longest cached prefix of `tokens` for `tenant` (whole blocks,
  // at least one token left to compute) into positions [0, cached) of `kv`
  // (capacity must cover it), sets kv.length and counts the lookup. Returns
  // the tokens copied: 0 (kv untouched) when reuse is off or nothing matches.
  // The blocks stay cached; the copy needs no hold on them afterwards.
  int64_t copy_prefix(const std::string& tenant, const std::vector<int32_t>& tokens, KvCache& kv);

  // Stores the full blocks of `tokens` (whose KV is positions [0,
  // tokens.size()) of `kv`) that the cache does not hold yet, for `tenant`.
  // Copies only blocks not already cached. Keeps fewer (a prefix) when the
  // pool has no room. Returns the blocks the cache adopted.
  int32_t keep(const std::string& tenant, const std::vector<int32_t>& tokens, const KvCache& kv);


  kv::KvCounters counters() const;

 private:
  void copy_in(const std::vector<kv::BlockId>& blocks, KvCache& kv) const;
  void copy_out(const KvCache& kv, int64_t first_position, const std::vector<kv::BlockId>& blocks);
  torch::Tensor block_index(const std::vector<kv::BlockId>& blocks) const;

  int32_t block_size_ = 16;
  int64_t n_kv_heads_ = 0;
  int64_t head_dim_ = 0;
  int64_t bytes_per_token_ = 0;
  std::unique_ptr<kv::KvCacheManager> manager_;
  std::vector<torch::Tensor> k_pool_;  // per layer: [pool_blocks, n_kv_heads, block_size, head_dim]
  std::vector<torch::Tensor> v_pool_;
};

}  // namespace reprox::engine
