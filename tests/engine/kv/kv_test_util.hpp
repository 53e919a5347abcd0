// Helpers for KvCacheManager tests: a request that takes its prefix from the
// cache, allocates the rest and gives everything back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/kv/kv_cache_manager.hpp"

namespace reprox::engine::kv::testing {

inline std::vector<int32_t> seq(int32_t start, int32_t n) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(start + i);
  return out;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline int32_t blocks_for(int64_t tokens, int32_t block_size) {
  return static_cast<int32_t>((tokens + block_size - 1) / block_size);
}

// A running request holding a block table for `tokens`.
struct HeldRequest {
  std::string tenant;
  std::vector<int32_t> tokens;
  PrefixMatch match;
  std::vector<BlockId> table;
  bool ok = false;
};

inline HeldRequest start_request(KvCacheManager& kv, const std::string& tenant, const std::vector<int32_t>& tokens) {
  HeldRequest r;
  r.tenant = tenant;
  r.tokens = tokens;
  r.match = kv.acquire_prefix(tenant, tokens);
  r.table = r.match.blocks;
  const int32_t need = blocks_for(static_cast<int64_t>(tokens.size()), kv.config().block_size) -
                       static_cast<int32_t>(r.table.size());
  auto fresh = kv.allocate(need);
  if (!fresh) {
    kv.unlock(r.table);
    r.table.clear();
    return r;
  }
  r.table.insert(r.table.end(), fresh->begin(), fresh->end());
  r.ok = true;
  return r;
}

// insert (all of r.tokens have KV) + unlock.
inline int32_t finish_request(KvCacheManager& kv, HeldRequest& r) {
  int32_t adopted = kv.insert(r.tenant, r.tokens, r.table);
  kv.unlock(r.table);
  r.table.clear();
  return adopted;
}

inline KvConfig config(int32_t block_size, int32_t pool_blocks, int32_t budget_blocks, int32_t slots = 10) {
  KvConfig c;
  c.block_size = block_size;
  c.bytes_per_block = 1000;
  c.pool_blocks = pool_blocks;
  c.cache_budget_bytes = static_cast<int64_t>(budget_blocks) * c.bytes_per_block;
  c.max_conversations_per_tenant = slots;
  return c;
}

}  // namespace reprox::engine::kv::testing
