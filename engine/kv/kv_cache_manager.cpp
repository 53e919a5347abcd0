#include "engine/kv/kv_cache_manager.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "engine/kv/internal/prefix_tree.hpp"

namespace reprox::engine::kv {

using internal::Node;

int32_t KvConfig::cache_budget_blocks() const {
  if (bytes_per_block <= 0 || cache_budget_bytes <= 0) return 0;
  const int64_t blocks = cache_budget_bytes / bytes_per_block;
  return static_cast<int32_t>(std::min<int64_t>(blocks, pool_blocks));
}

std::string validate_kv_config(const KvConfig& c) {
  if (c.block_size < 1) return "kv block_size must be at least 1";
  if (c.bytes_per_block < 1) return "kv bytes_per_block must be at least 1";
  if (c.pool_blocks < 1) return "kv pool_blocks must be at least 1";
  if (c.cache_budget_bytes < 0) return "kv cache budget must not be negative";
  if (c.max_conversations_per_tenant < 1) return "kv max_conversations_per_tenant must be at least 1";
  return "";
}

KvCacheManager::KvCacheManager(const KvConfig& config)
    : config_(config), pool_(config.pool_blocks > 0 ? config.pool_blocks : 0) {
  std::string error = validate_kv_config(config_);
  if (!error.empty()) throw std::invalid_argument(error);
  budget_blocks_ = config_.cache_budget_blocks();
  tree_ = std::make_unique<internal::PrefixTree>(config_.block_size, &pool_);
  counters_.pool_blocks = config_.pool_blocks;
}

KvCacheManager::~KvCacheManager() = default;

PrefixMatch KvCacheManager::match_prefix(const std::string& tenant, const std::vector<int32_t>& tokens) {
  PrefixMatch m;
  if (!reuse_enabled() || tokens.size() < 2) return m;
  const size_t max_blocks = (tokens.size() - 1) / static_cast<size_t>(config_.block_size);
  m.blocks = tree_->match(tenant, tokens.data(), max_blocks);
  m.cached_tokens = static_cast<int64_t>(m.blocks.size()) * config_.block_size;
  for (BlockId b : m.blocks)
    if (pool_.refcount(b) == 0) ++m.unreferenced_blocks;
  return m;
}

PrefixMatch KvCacheManager::acquire_prefix(const std::string& tenant, const std::vector<int32_t>& tokens) {
  PrefixMatch m = match_prefix(tenant, tokens);
  lock(m.blocks);  // tree blocks are cached, so this cannot fail
  ++counters_.lookups;
  if (!m.blocks.empty()) ++counters_.hits;
  counters_.reused_tokens += static_cast<uint64_t>(m.cached_tokens);
  return m;
}

bool KvCacheManager::lock(const std::vector<BlockId>& blocks) {
  for (BlockId b : blocks)
    if (!pool_.valid(b) || (pool_.refcount(b) == 0 && !pool_.cached(b))) return false;
  for (BlockId b : blocks) pool_.ref(b);
  return true;
}

bool KvCacheManager::unlock(const std::vector<BlockId>& blocks) {
  std::vector<BlockId> sorted(blocks);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (!pool_.valid(sorted[i]) || pool_.refcount(sorted[i]) < static_cast<int32_t>(j - i)) return false;
    i = j;
  }
  for (BlockId b : blocks) pool_.unref(b);
  if (!over_slot_limit_.empty()) {
    std::set<std::string> tenants;
    tenants.swap(over_slot_limit_);
    for (const std::string& tenant : tenants) enforce_slots(tenant, nullptr, /*strict_lru=*/true);
  }
  if (tree_->cached_blocks() > budget_blocks_) enforce_budget();
  return true;
}

int32_t KvCacheManager::allocatable_blocks() const { return pool_.free_count() + tree_->evictable_blocks(); }

std::optional<std::vector<BlockId>> KvCacheManager::allocate(int32_t n) {
  if (n < 0) return std::nullopt;
  if (pool_.free_count() < n && allocatable_blocks() < n) return std::nullopt;
  while (pool_.free_count() < n) {
    Node* victim = tree_->oldest_trimmable_leaf();
    if (victim == nullptr) return std::nullopt;  // unreachable: allocatable_blocks() said there was room
    count_eviction(tree_->trim_leaf(victim));
  }
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(n));
  pool_.take(n, &out);
  return out;
}

int32_t KvCacheManager::insert(const std::string& tenant, const std::vector<int32_t>& tokens,
                               const std::vector<BlockId>& blocks) {
  if (!reuse_enabled()) return 0;
  const size_t n_blocks = std::min(tokens.size() / static_cast<size_t>(config_.block_size), blocks.size());
  internal::TreeInsert r = tree_->insert(tenant, tokens.data(), blocks.data(), n_blocks);
  counters_.inserted_blocks += static_cast<uint64_t>(r.adopted_blocks);
  enforce_slots(tenant, r.leaf);
  enforce_budget();
  return r.adopted_blocks;
}

void KvCacheManager::count_eviction(int32_t blocks) {
  ++counters_.evictions;
  counters_.evicted_blocks += static_cast<uint64_t>(blocks);
}

void KvCacheManager::enforce_budget() {
  while (tree_->cached_blocks() > budget_blocks_) {
    Node* victim = tree_->oldest_trimmable_leaf();
    if (victim == nullptr) return;  // the rest is held; retried on unlock
    count_eviction(tree_->trim_leaf(victim));
  }
}

void KvCacheManager::enforce_slots(const std::string& salt, const void* keep, bool strict_lru) {
  const size_t limit = static_cast<size_t>(config_.max_conversations_per_tenant);
  for (;;) {
    internal::Tenant* tenant = tree_->find_tenant(salt);
    if (tenant == nullptr || tenant->leaves.size() <= limit) return;
    Node* victim = tree_->oldest_evictable_leaf_of(*tenant, static_cast<const Node*>(keep));
    if (strict_lru && victim != tenant->leaves.begin()->second) victim = nullptr;
    if (victim == nullptr) {  // in use: retried on unlock
      over_slot_limit_.insert(salt);
      return;
    }
    ++counters_.slot_evictions;
    // Remove the conversation's own part: the leaf and the ancestors only it used.
    Node* parent = victim->parent;
    bool parent_is_root = parent->is_root();
    count_eviction(tree_->remove_leaf(victim));
    while (!parent_is_root && parent->is_leaf() && parent != keep && tree_->evictable(*parent)) {
      Node* up = parent->parent;
      parent_is_root = up->is_root();
      count_eviction(tree_->remove_leaf(parent));
      parent = up;
    }
  }
}

int32_t KvCacheManager::exclusive_blocks(const std::vector<BlockId>& table) const {
  int32_t n = 0;
  for (BlockId b : table)
    if (pool_.valid(b) && pool_.refcount(b) == 1) ++n;
  return n;
}

int32_t KvCacheManager::conversations(const std::string& tenant) const {
  const internal::Tenant* t = tree_->find_tenant(tenant);
  return t == nullptr ? 0 : static_cast<int32_t>(t->leaves.size());
}

KvCounters KvCacheManager::counters() const {
  KvCounters c = counters_;
  c.cached_blocks = tree_->cached_blocks();
  c.bytes_held = static_cast<int64_t>(c.cached_blocks) * config_.bytes_per_block;
  c.free_blocks = pool_.free_count();
  return c;
}

}  // namespace reprox::engine::kv
