#include "engine/runtime/kv_reuse.hpp"

#include <torch/types.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace reprox::engine {

KvReuse::KvReuse(const KvCache& layout, const KvReuseOptions& options) : block_size_(options.block_size) {
  if (layout.k.empty() || layout.k.size() != layout.v.size() || layout.k.front().dim() != 3)
    throw std::invalid_argument("kv reuse: the model's KV layout is not [n_kv_heads, capacity, head_dim] per layer");
  if (block_size_ < 1) throw std::invalid_argument("kv reuse: block_size must be >= 1");
  const torch::Tensor& first = layout.k.front();
  n_kv_heads_ = first.size(0);
  head_dim_ = first.size(2);
  const int64_t layers = static_cast<int64_t>(layout.k.size());
  bytes_per_token_ = 2 * layers * n_kv_heads_ * head_dim_ * static_cast<int64_t>(first.element_size());
  const int64_t bytes_per_block = bytes_per_token_ * block_size_;
  const int64_t budget_blocks = std::min<int64_t>(std::max<int64_t>(options.budget_bytes, 0) / bytes_per_block,
                                                  std::numeric_limits<int32_t>::max() / 2);
  if (budget_blocks < 1) return;  // reuse off

  kv::KvConfig config;
  config.block_size = block_size_;
  config.bytes_per_block = bytes_per_block;
  // Blocks live in the pool only while cached or while keep() copies them in,
  // so the pool is the budget: allocate() evicts older conversations for room.
  config.pool_blocks = static_cast<int32_t>(budget_blocks);
  config.cache_budget_bytes = budget_blocks * bytes_per_block;
  config.max_conversations_per_tenant = options.max_conversations_per_tenant;
  manager_ = std::make_unique<kv::KvCacheManager>(config);

  c10::InferenceMode guard;
  // empty(): pages are touched only when a block is first written.
  const auto tensor_options = first.options();
  for (int64_t l = 0; l < layers; ++l) {
    k_pool_.push_back(torch::empty({budget_blocks, n_kv_heads_, block_size_, head_dim_}, tensor_options));
    v_pool_.push_back(torch::empty({budget_blocks, n_kv_heads_, block_size_, head_dim_}, tensor_options));
  }
}

KvReuse::~KvReuse() = default;

torch::Tensor KvReuse::block_index(const std::vector<kv::BlockId>& blocks) const {
  std::vector<int64_t> ids(blocks.begin(), blocks.end());
  return torch::tensor(ids, torch::TensorOptions().dtype(torch::kLong)).to(k_pool_.front().device());
}

void KvReuse::copy_in(const std::vector<kv::BlockId>& blocks, KvCache& kv) const {
  const int64_t nb = static_cast<int64_t>(blocks.size());
  const torch::Tensor index = block_index(blocks);
  for (size_t l = 0; l < k_pool_.size(); ++l) {
    for (auto [pool, dst] : {std::pair{&k_pool_[l], &kv.k[l]}, std::pair{&v_pool_[l], &kv.v[l]}}) {
      // [nb, H, bs, D] -> [H, nb * bs, D]
      torch::Tensor rows = pool->index_select(0, index).permute({1, 0, 2, 3}).reshape({n_kv_heads_, nb * block_size_, head_dim_});
      dst->narrow(1, 0, nb * block_size_).copy_(rows);
    }
  }
}

void KvReuse::copy_out(const KvCache& kv, int64_t first_position, const std::vector<kv::BlockId>& blocks) {
  const int64_t nb = static_cast<int64_t>(blocks.size());
  const torch::Tensor index = block_index(blocks);
  for (size_t l = 0; l < k_pool_.size(); ++l) {
    for (auto [src, pool] : {std::pair{&kv.k[l], &k_pool_[l]}, std::pair{&kv.v[l], &v_pool_[l]}}) {
      // [H, nb * bs, D] -> [nb, H, bs, D]
      torch::Tensor rows = src->narrow(1, first_position, nb * block_size_)
                               .reshape({n_kv_heads_, nb, block_size_, head_dim_})
                               .permute({1, 0, 2, 3});
      pool->index_copy_(0, index, rows.contiguous());
    }
  }
}

int64_t KvReuse::cached_prefix(const std::string& tenant, const std::vector<int32_t>& tokens) {
  return manager_ ? manager_->match_prefix(tenant, tokens).cached_tokens : 0;
}

int64_t KvReuse::copy_prefix(const std::string& tenant, const std::vector<int32_t>& tokens, KvCache& kv) {
  if (!manager_) return 0;
  kv::PrefixMatch m = manager_->acquire_prefix(tenant, tokens);  // locks while copying, counts the lookup
  if (m.blocks.empty()) return 0;
  int64_t copied = 0;
  if (kv.capacity() >= m.cached_tokens && kv.k.size() == k_pool_.size()) {  // always, for a cache sized for tokens
    c10::InferenceMode guard;
    copy_in(m.blocks, kv);
    kv.length = copied = m.cached_tokens;
  }
  manager_->unlock(m.blocks);
  return copied;
}

int32_t KvReuse::keep(const std::string& tenant, const std::vector<int32_t>& tokens, const KvCache& kv) {
  if (!manager_) return 0;
  const int64_t computed = std::min<int64_t>(static_cast<int64_t>(tokens.size()), kv.length);
  const int64_t full_blocks = computed / block_size_;
  if (full_blocks == 0) return 0;
  std::vector<int32_t> stored(tokens.begin(), tokens.begin() + full_blocks * block_size_);
  // Blocks the cache already holds keep their storage; lock them so the
  // allocation below cannot evict them.
  std::vector<kv::BlockId> table = manager_->match_prefix(tenant, stored).blocks;
  if (!manager_->lock(table)) return 0;
  const int64_t missing = full_blocks - static_cast<int64_t>(table.size());
  const int32_t take = static_cast<int32_t>(std::min<int64_t>(missing, manager_->allocatable_blocks()));
  int32_t adopted = 0;
  if (take > 0) {
    if (auto fresh = manager_->allocate(take)) {
      c10::InferenceMode guard;
      copy_out(kv, static_cast<int64_t>(table.size()) * block_size_, *fresh);
      table.insert(table.end(), fresh->begin(), fresh->end());
      stored.resize(table.size() * block_size_);
      adopted = manager_->insert(tenant, stored, table);
    }
  }
  manager_->unlock(table);
  return adopted;
}

kv::KvCounters KvReuse::counters() const { return manager_ ? manager_->counters() : kv::KvCounters{}; }

}  // namespace reprox::engine
