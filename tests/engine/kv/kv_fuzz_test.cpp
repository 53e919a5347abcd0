// Random operations against KvCacheManager, checked against a reference
// model: each block's "KV" is modelled as (tenant, token prefix up to the
// end of the block), written when a request computes it. A reused block must
// hold exactly the prefix it is matched for (so reuse is exact and never
// crosses tenants), a held block is never handed out again, and without
// memory pressure the match length equals the longest whole-block prefix
// among the inserted sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine/kv/kv_cache_manager.hpp"
#include "tests/engine/kv/kv_test_util.hpp"

namespace reprox::engine::kv {
namespace {

using Content = std::vector<int32_t>;  // tenant index, then the token prefix

struct LiveRequest {
  int tenant = 0;
  std::vector<int32_t> tokens;
  std::vector<BlockId> table;
};

class Fuzzer {
 public:
  Fuzzer(const KvConfig& config, uint32_t seed, bool pressure)
      : kv_(config), bs_(config.block_size), rng_(seed), pressure_(pressure),
        content_(static_cast<size_t>(config.pool_blocks)) {}

  void run(int steps) {
    for (int step = 0; step < steps; ++step) {
      const int op = pick(10);
      if (op < 4 && live_.size() < 6) start();
      else if (op < 7 && !live_.empty()) finish(true);
      else if (op < 8 && !live_.empty()) finish(false);
      else if (op < 9 && !live_.empty()) insert_midway();
      else peek();
      check_invariants();
      if (::testing::Test::HasFailure()) return;
    }
    while (!live_.empty()) finish(true);
    check_invariants();
  }

  int started = 0, failed_allocations = 0, reused_requests = 0;

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  static std::string salt(int tenant) { return "tenant-" + std::to_string(tenant); }

  std::vector<int32_t> random_tokens() {
    const int tenant_bias = pick(3);
    std::vector<int32_t> out;
    auto& history = history_[tenant_bias];
    if (!history.empty() && pick(4) != 0) {
      const auto& base = history[static_cast<size_t>(pick(static_cast<int>(history.size())))];
      out.assign(base.begin(), base.begin() + pick(static_cast<int>(base.size()) + 1));
    }
    const int extra = 1 + pick(3 * bs_);
    for (int i = 0; i < extra; ++i) out.push_back(pick(3));  // a tiny alphabet: many near-collisions
    return out;
  }

  Content content_for(int tenant, const std::vector<int32_t>& tokens, size_t end) const {
    Content c{tenant};
    c.insert(c.end(), tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(end));
    return c;
  }

  int64_t reference_match(int tenant, const std::vector<int32_t>& tokens) const {
    if (tokens.size() < 2) return 0;
    size_t best = 0;
    auto it = inserted_.find(tenant);
    if (it != inserted_.end())
      for (const auto& s : it->second) {
        size_t l = 0;
        while (l < s.size() && l < tokens.size() && s[l] == tokens[l]) ++l;
        best = std::max(best, l);
      }
    best = std::min(best, tokens.size() - 1);
    return static_cast<int64_t>(best / static_cast<size_t>(bs_) * static_cast<size_t>(bs_));
  }

  void check_match(int tenant, const std::vector<int32_t>& tokens, const PrefixMatch& m) {
    ASSERT_EQ(m.cached_tokens, static_cast<int64_t>(m.blocks.size()) * bs_);
    ASSERT_LT(m.cached_tokens, static_cast<int64_t>(tokens.size()));
    for (size_t i = 0; i < m.blocks.size(); ++i)
      ASSERT_EQ(content_[static_cast<size_t>(m.blocks[i])], content_for(tenant, tokens, (i + 1) * static_cast<size_t>(bs_)))
          << "block " << i << " of a match holds other KV";
    const int64_t expected = reference_match(tenant, tokens);
    if (pressure_) ASSERT_LE(m.cached_tokens, expected);
    else ASSERT_EQ(m.cached_tokens, expected);
  }

  void start() {
    const int tenant = pick(3);
    std::vector<int32_t> tokens = random_tokens();
    PrefixMatch m = kv_.acquire_prefix(salt(tenant), tokens);
    check_match(tenant, tokens, m);
    ++started;
    if (m.cached_tokens > 0) ++reused_requests;
    const int32_t need = testing::blocks_for(static_cast<int64_t>(tokens.size()), bs_) - static_cast<int32_t>(m.blocks.size());
    auto fresh = kv_.allocate(need);
    if (!fresh) {
      ++failed_allocations;
      ASSERT_TRUE(kv_.unlock(m.blocks));
      return;
    }
    std::set<BlockId> held = held_blocks();
    for (BlockId b : *fresh) ASSERT_EQ(held.count(b), 0u) << "a held block was handed out again";
    LiveRequest r{tenant, tokens, m.blocks};
    r.table.insert(r.table.end(), fresh->begin(), fresh->end());
    for (size_t i = m.blocks.size(); i < r.table.size(); ++i)  // "compute" the new positions
      content_[static_cast<size_t>(r.table[i])] =
          content_for(tenant, tokens, std::min(tokens.size(), (i + 1) * static_cast<size_t>(bs_)));
    live_.push_back(std::move(r));
  }

  void record_insert(int tenant, const std::vector<int32_t>& tokens) {
    std::vector<int32_t> whole(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(tokens.size() / static_cast<size_t>(bs_) * static_cast<size_t>(bs_)));
    if (!whole.empty()) inserted_[tenant].insert(whole);
    history_[tenant].push_back(tokens);
  }

  void finish(bool keep) {
    const size_t i = static_cast<size_t>(pick(static_cast<int>(live_.size())));
    LiveRequest r = std::move(live_[i]);
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
    if (keep) {
      kv_.insert(salt(r.tenant), r.tokens, r.table);
      record_insert(r.tenant, r.tokens);
    }
    ASSERT_TRUE(kv_.unlock(r.table));
  }

  void insert_midway() {
    LiveRequest& r = live_[static_cast<size_t>(pick(static_cast<int>(live_.size())))];
    std::vector<int32_t> part(r.tokens.begin(), r.tokens.begin() + pick(static_cast<int>(r.tokens.size()) + 1));
    kv_.insert(salt(r.tenant), part, r.table);
    record_insert(r.tenant, part);
  }

  void peek() {
    const int tenant = pick(3);
    std::vector<int32_t> tokens = random_tokens();
    check_match(tenant, tokens, kv_.match_prefix(salt(tenant), tokens));
  }

  std::set<BlockId> held_blocks() const {
    std::set<BlockId> held;
    for (const auto& r : live_) held.insert(r.table.begin(), r.table.end());
    return held;
  }

  void check_invariants() {
    KvCounters c = kv_.counters();
    const int32_t pool = kv_.config().pool_blocks;
    const auto held = static_cast<int32_t>(held_blocks().size());
    ASSERT_LE(c.free_blocks + c.cached_blocks, pool);
    ASSERT_GE(c.free_blocks + c.cached_blocks + held, pool);
    ASSERT_EQ(c.bytes_held, static_cast<int64_t>(c.cached_blocks) * kv_.config().bytes_per_block);
    if (live_.empty()) {
      ASSERT_EQ(c.free_blocks + c.cached_blocks, pool);
      ASSERT_LE(c.cached_blocks, kv_.config().cache_budget_blocks());
      ASSERT_EQ(kv_.allocatable_blocks(), pool);
      for (int t = 0; t < 3; ++t) ASSERT_LE(kv_.conversations(salt(t)), kv_.config().max_conversations_per_tenant);
    }
  }

  KvCacheManager kv_;
  int32_t bs_;
  std::mt19937 rng_;
  bool pressure_;
  std::vector<Content> content_;
  std::vector<LiveRequest> live_;
  std::map<int, std::set<std::vector<int32_t>>> inserted_;
  std::map<int, std::vector<std::vector<int32_t>>> history_;
};

TEST(KvFuzz, MatchesTheReferenceWithoutPressure) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    for (int32_t bs : {1, 2, 4}) {
      Fuzzer f(testing::config(bs, 100000, 100000, 1000000), seed, /*pressure=*/false);
      f.run(400);
      ASSERT_FALSE(::testing::Test::HasFailure()) << "seed " << seed << " block_size " << bs;
      EXPECT_GT(f.reused_requests, 0);
    }
  }
}

TEST(KvFuzz, StaysExactUnderEvictionAndLimits) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    for (int32_t bs : {1, 3, 4}) {
      Fuzzer f(testing::config(bs, 48, 20, 2), seed, /*pressure=*/true);
      f.run(600);
      ASSERT_FALSE(::testing::Test::HasFailure()) << "seed " << seed << " block_size " << bs;
      EXPECT_GT(f.started, 0);
    }
  }
}

}  // namespace
}  // namespace reprox::engine::kv
