#include "engine/kv/kv_cache_manager.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "tests/engine/kv/kv_test_util.hpp"

namespace reprox::engine::kv {
namespace {

using testing::concat;
using testing::config;
using testing::finish_request;
using testing::seq;
using testing::start_request;

std::vector<BlockId> prefix(const std::vector<BlockId>& v, size_t n) { return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)}; }

TEST(KvCacheManager, RejectsBadConfig) {
  EXPECT_THROW(KvCacheManager(config(0, 8, 8)), std::invalid_argument);
  EXPECT_THROW(KvCacheManager(config(4, 0, 8)), std::invalid_argument);
  EXPECT_THROW(KvCacheManager(config(4, 8, 8, 0)), std::invalid_argument);
  KvConfig c = config(4, 8, 8);
  c.bytes_per_block = 0;
  EXPECT_THROW(KvCacheManager{c}, std::invalid_argument);
  EXPECT_EQ(validate_kv_config(config(4, 8, 8)), "");
}

TEST(KvCacheManager, BudgetIsCappedByThePool) {
  EXPECT_EQ(config(4, 8, 100).cache_budget_blocks(), 8);
  KvConfig c = config(4, 8, 3);
  c.cache_budget_bytes += 999;  // a partial block does not count
  EXPECT_EQ(c.cache_budget_blocks(), 3);
}

TEST(KvCacheManager, EmptyCacheMatchesNothing) {
  KvCacheManager kv(config(4, 16, 16));
  PrefixMatch m = kv.match_prefix("a", seq(0, 20));
  EXPECT_EQ(m.cached_tokens, 0);
  EXPECT_TRUE(m.blocks.empty());
}

TEST(KvCacheManager, MatchesLongestPrefixInWholeBlocksLeavingOneToken) {
  KvCacheManager kv(config(4, 16, 16));
  auto r = start_request(kv, "a", seq(0, 10));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(finish_request(kv, r), 2);  // 10 tokens: 2 full blocks kept, the partial one freed

  auto same = kv.match_prefix("a", seq(0, 10));
  EXPECT_EQ(same.cached_tokens, 8);
  auto longer = kv.match_prefix("a", seq(0, 30));
  EXPECT_EQ(longer.cached_tokens, 8);
  EXPECT_EQ(longer.blocks, same.blocks);
  // Exactly 8 tokens: one must stay uncovered, so only the first block.
  auto eight = kv.match_prefix("a", seq(0, 8));
  EXPECT_EQ(eight.cached_tokens, 4);
  EXPECT_EQ(eight.blocks, prefix(same.blocks, 1));
  auto nine = kv.match_prefix("a", seq(0, 9));
  EXPECT_EQ(nine.cached_tokens, 8);
  // Diverging inside the second block: the first block only.
  auto diverge = kv.match_prefix("a", concat(seq(0, 6), seq(100, 10)));
  EXPECT_EQ(diverge.cached_tokens, 4);
  // Diverging in the first token: nothing.
  EXPECT_EQ(kv.match_prefix("a", seq(1, 10)).cached_tokens, 0);
  EXPECT_EQ(kv.counters().cached_blocks, 2);
  EXPECT_EQ(kv.counters().free_blocks, 14);
}

TEST(KvCacheManager, SplitsAnEdgeWhereSequencesDiverge) {
  KvCacheManager kv(config(4, 32, 32));
  auto a = start_request(kv, "t", concat(seq(0, 8), seq(100, 8)));
  ASSERT_TRUE(a.ok);
  const std::vector<BlockId> a_table = a.table;
  EXPECT_EQ(finish_request(kv, a), 4);
  auto b = start_request(kv, "t", concat(seq(0, 8), seq(200, 9)));
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.match.cached_tokens, 8);
  EXPECT_EQ(b.match.blocks, prefix(a_table, 2));
  EXPECT_EQ(finish_request(kv, b), 2);  // the two new full blocks; the shared ones stay A's
  EXPECT_EQ(kv.conversations("t"), 2);
  EXPECT_EQ(kv.counters().cached_blocks, 6);

  auto ma = kv.match_prefix("t", concat(concat(seq(0, 8), seq(100, 8)), {1}));
  EXPECT_EQ(ma.cached_tokens, 16);
  EXPECT_EQ(ma.blocks, a_table);
  auto mb = kv.match_prefix("t", concat(seq(0, 8), seq(200, 9)));
  EXPECT_EQ(mb.cached_tokens, 16);
  EXPECT_EQ(prefix(mb.blocks, 2), prefix(a_table, 2));
  EXPECT_NE(mb.blocks[2], a_table[2]);
  // A third branch off the shared part, and a split inside an edge of one block.
  auto c = start_request(kv, "t", concat(seq(0, 4), seq(300, 8)));
  ASSERT_TRUE(c.ok);
  EXPECT_EQ(c.match.cached_tokens, 4);
  EXPECT_EQ(finish_request(kv, c), 2);
  EXPECT_EQ(kv.conversations("t"), 3);
  EXPECT_EQ(kv.match_prefix("t", concat(seq(0, 8), seq(100, 8))).cached_tokens, 12);
  EXPECT_EQ(kv.match_prefix("t", concat(seq(0, 4), seq(300, 9))).cached_tokens, 12);
}

TEST(KvCacheManager, InsertingAKnownPrefixAddsNothing) {
  KvCacheManager kv(config(4, 16, 16));
  auto a = start_request(kv, "t", seq(0, 16));
  ASSERT_TRUE(a.ok);
  finish_request(kv, a);
  auto b = start_request(kv, "t", seq(0, 9));  // ends inside A's edge
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(finish_request(kv, b), 0);
  EXPECT_EQ(kv.conversations("t"), 1);
  EXPECT_EQ(kv.counters().cached_blocks, 4);
  EXPECT_EQ(kv.counters().free_blocks, 12);
}

TEST(KvCacheManager, TenantsShareNothing) {
  KvCacheManager kv(config(4, 32, 32));
  auto a = start_request(kv, "tenant-a", seq(0, 17));
  ASSERT_TRUE(a.ok);
  const std::vector<BlockId> a_blocks = prefix(a.table, 4);
  finish_request(kv, a);
  EXPECT_EQ(kv.match_prefix("tenant-b", seq(0, 17)).cached_tokens, 0);
  auto b = start_request(kv, "tenant-b", seq(0, 17));
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.match.cached_tokens, 0);
  const std::vector<BlockId> b_blocks = prefix(b.table, 4);
  EXPECT_EQ(finish_request(kv, b), 4);  // its own copy, not A's
  std::set<BlockId> a_set(a_blocks.begin(), a_blocks.end());
  for (BlockId id : b_blocks) EXPECT_EQ(a_set.count(id), 0u);
  EXPECT_EQ(kv.match_prefix("tenant-a", seq(0, 17)).blocks, a_blocks);
  EXPECT_EQ(kv.match_prefix("tenant-b", seq(0, 17)).blocks, b_blocks);
  EXPECT_EQ(kv.counters().cached_blocks, 8);
  EXPECT_EQ(kv.counters().reused_tokens, 0u);
  EXPECT_EQ(kv.match_prefix("", seq(0, 17)).cached_tokens, 0);
}

TEST(KvCacheManager, AllocateEvictsLeastRecentlyUsedUnreferencedLeaves) {
  KvCacheManager kv(config(4, 6, 6));
  auto a = start_request(kv, "t", seq(0, 8));
  auto b = start_request(kv, "t", seq(100, 8));
  auto c = start_request(kv, "t", seq(200, 8));
  ASSERT_TRUE(a.ok && b.ok && c.ok);
  finish_request(kv, a);
  finish_request(kv, b);
  finish_request(kv, c);
  EXPECT_EQ(kv.counters().free_blocks, 0);
  EXPECT_EQ(kv.allocatable_blocks(), 6);
  kv.match_prefix("t", seq(0, 9));  // A is now the most recently used
  auto got = kv.allocate(2);        // evicts B, the oldest
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(kv.match_prefix("t", seq(100, 9)).cached_tokens, 0);
  EXPECT_EQ(kv.match_prefix("t", seq(0, 9)).cached_tokens, 8);
  EXPECT_EQ(kv.match_prefix("t", seq(200, 9)).cached_tokens, 8);
  EXPECT_EQ(kv.counters().evictions, 1u);
  EXPECT_EQ(kv.counters().evicted_blocks, 2u);
  kv.unlock(*got);
}

TEST(KvCacheManager, HeldBlocksAreNeverEvicted) {
  KvCacheManager kv(config(4, 6, 6));
  auto a = start_request(kv, "t", seq(0, 8));
  auto b = start_request(kv, "t", seq(100, 8));
  ASSERT_TRUE(a.ok && b.ok);
  finish_request(kv, a);
  finish_request(kv, b);
  // A running request reuses A (the older one) and holds it.
  auto reader = kv.acquire_prefix("t", seq(0, 9));
  ASSERT_EQ(reader.cached_tokens, 8);
  EXPECT_EQ(reader.unreferenced_blocks, 2);
  EXPECT_EQ(kv.allocatable_blocks(), 4);  // 2 free + B's 2
  EXPECT_FALSE(kv.allocate(5).has_value());
  EXPECT_EQ(kv.counters().evictions, 0u);  // a failed allocate evicts nothing
  auto got = kv.allocate(4);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(kv.match_prefix("t", seq(100, 9)).cached_tokens, 0);
  EXPECT_EQ(kv.match_prefix("t", seq(0, 9)).blocks, reader.blocks);
  for (BlockId id : *got) EXPECT_EQ(std::count(reader.blocks.begin(), reader.blocks.end(), id), 0);
  EXPECT_EQ(kv.allocatable_blocks(), 0);
  EXPECT_FALSE(kv.allocate(1).has_value());
  kv.unlock(reader.blocks);
  EXPECT_EQ(kv.allocatable_blocks(), 2);
  kv.unlock(*got);
  EXPECT_EQ(kv.allocatable_blocks(), 6);
}

TEST(KvCacheManager, HoldingPartOfAnEdgeLeavesItsTailEvictable) {
  KvCacheManager kv(config(4, 6, 6));
  auto a = start_request(kv, "t", seq(0, 16));
  ASSERT_TRUE(a.ok);
  const std::vector<BlockId> a_blocks = a.table;
  finish_request(kv, a);                               // one edge of 4 blocks
  auto reader = kv.acquire_prefix("t", seq(0, 9));     // holds the first 2 of them
  ASSERT_EQ(reader.cached_tokens, 8);
  EXPECT_EQ(kv.allocatable_blocks(), 2 + 2);           // free + the edge's unheld tail
  auto got = kv.allocate(4);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(kv.counters().cached_blocks, 2);
  EXPECT_EQ(kv.match_prefix("t", seq(0, 16)).blocks, prefix(a_blocks, 2));
  kv.unlock(*got);
  kv.unlock(reader.blocks);
  EXPECT_EQ(kv.allocatable_blocks(), 6);
}

TEST(KvCacheManager, AnAncestorOfAHeldBlockIsNotEvictable) {
  KvCacheManager kv(config(4, 8, 8));
  auto a = start_request(kv, "t", seq(0, 8));
  ASSERT_TRUE(a.ok);
  finish_request(kv, a);
  // B computed the same first block itself (it did not reuse A's), then
  // inserted while still holding its blocks: its new leaf hangs under A's
  // unreferenced block.
  auto b_table = kv.allocate(3);
  ASSERT_TRUE(b_table.has_value());
  EXPECT_EQ(kv.insert("t", concat(seq(0, 4), seq(50, 8)), *b_table), 2);
  // Free 3, plus A's second block (a leaf nobody holds); A's first block is
  // the parent of B's held leaf, so it is not evictable.
  EXPECT_EQ(kv.allocatable_blocks(), 3 + 1);
  EXPECT_FALSE(kv.allocate(5).has_value());
  kv.unlock(*b_table);
  EXPECT_EQ(kv.allocatable_blocks(), 8);  // B's first block freed, everything else evictable
}

TEST(KvCacheManager, CacheStaysWithinItsByteBudget) {
  KvCacheManager kv(config(4, 32, 5));
  auto a = start_request(kv, "t", seq(0, 12));
  ASSERT_TRUE(a.ok);
  finish_request(kv, a);
  EXPECT_EQ(kv.counters().bytes_held, 3000);
  auto b = start_request(kv, "t", seq(100, 12));
  ASSERT_TRUE(b.ok);
  finish_request(kv, b);  // 6 blocks > 5: A, the oldest, goes
  KvCounters c = kv.counters();
  EXPECT_EQ(c.cached_blocks, 3);
  EXPECT_EQ(c.bytes_held, 3000);
  EXPECT_EQ(c.evictions, 1u);
  EXPECT_EQ(kv.match_prefix("t", seq(0, 13)).cached_tokens, 0);
  EXPECT_EQ(kv.match_prefix("t", seq(100, 13)).cached_tokens, 12);
  // A sequence larger than the whole budget is not kept once released.
  auto big = start_request(kv, "t", seq(500, 28));
  ASSERT_TRUE(big.ok);
  EXPECT_EQ(kv.insert("t", big.tokens, big.table), 7);
  EXPECT_EQ(kv.counters().cached_blocks, 7);  // held, so over budget for now
  kv.unlock(big.table);
  EXPECT_LE(kv.counters().cached_blocks, 5);
  EXPECT_EQ(kv.counters().free_blocks + kv.counters().cached_blocks, 32);
}

TEST(KvCacheManager, ZeroBudgetTurnsReuseOff) {
  KvCacheManager kv(config(4, 8, 0));
  EXPECT_FALSE(kv.reuse_enabled());
  auto a = start_request(kv, "t", seq(0, 20));
  ASSERT_TRUE(a.ok);  // running requests still get blocks
  EXPECT_EQ(finish_request(kv, a), 0);
  auto again = start_request(kv, "t", seq(0, 20));
  ASSERT_TRUE(again.ok);
  EXPECT_EQ(again.match.cached_tokens, 0);
  finish_request(kv, again);
  KvCounters c = kv.counters();
  EXPECT_EQ(c.cached_blocks, 0);
  EXPECT_EQ(c.bytes_held, 0);
  EXPECT_EQ(c.free_blocks, 8);
  EXPECT_EQ(c.reused_tokens, 0u);
}

TEST(KvCacheManager, PerTenantConversationLimitEvictsThatTenantsOldest) {
  KvCacheManager kv(config(4, 64, 64, /*slots=*/3));
  auto other = start_request(kv, "other", seq(1000, 8));
  ASSERT_TRUE(other.ok);
  finish_request(kv, other);
  for (int32_t i = 0; i < 3; ++i) {
    auto r = start_request(kv, "t", seq(i * 100, 8));
    ASSERT_TRUE(r.ok);
    finish_request(kv, r);
  }
  EXPECT_EQ(kv.conversations("t"), 3);
  kv.match_prefix("t", seq(0, 9));  // conversation 0 becomes the most recent
  auto r = start_request(kv, "t", seq(300, 8));
  ASSERT_TRUE(r.ok);
  finish_request(kv, r);
  EXPECT_EQ(kv.conversations("t"), 3);
  EXPECT_EQ(kv.counters().slot_evictions, 1u);
  EXPECT_EQ(kv.match_prefix("t", seq(100, 9)).cached_tokens, 0);  // the least recently used
  EXPECT_EQ(kv.match_prefix("t", seq(0, 9)).cached_tokens, 8);
  EXPECT_EQ(kv.match_prefix("t", seq(200, 9)).cached_tokens, 8);
  EXPECT_EQ(kv.match_prefix("t", seq(300, 9)).cached_tokens, 8);
  EXPECT_EQ(kv.conversations("other"), 1);  // other tenants are untouched
  EXPECT_EQ(kv.match_prefix("other", seq(1000, 9)).cached_tokens, 8);
}

TEST(KvCacheManager, ConversationLimitRemovesTheConversationsOwnBranch) {
  KvCacheManager kv(config(4, 64, 64, /*slots=*/2));
  // Two conversations sharing a system prompt (the first 8 tokens).
  auto a = start_request(kv, "t", concat(seq(0, 8), seq(100, 8)));
  auto b = start_request(kv, "t", concat(seq(0, 8), seq(200, 8)));
  ASSERT_TRUE(a.ok && b.ok);
  finish_request(kv, a);
  finish_request(kv, b);
  auto c = start_request(kv, "t", seq(500, 8));
  ASSERT_TRUE(c.ok);
  finish_request(kv, c);
  EXPECT_EQ(kv.conversations("t"), 2);
  EXPECT_EQ(kv.match_prefix("t", concat(seq(0, 8), seq(100, 8))).cached_tokens, 8);  // shared part stays for B
  EXPECT_EQ(kv.match_prefix("t", concat(seq(0, 8), seq(200, 9))).cached_tokens, 16);
  EXPECT_EQ(kv.counters().cached_blocks, 2 + 2 + 2);
}

TEST(KvCacheManager, ConversationInUseIsNotEvictedByTheLimit) {
  KvCacheManager kv(config(4, 64, 64, /*slots=*/1));
  auto a = start_request(kv, "t", seq(0, 8));
  ASSERT_TRUE(a.ok);
  finish_request(kv, a);
  auto reader = kv.acquire_prefix("t", seq(0, 9));
  auto b = start_request(kv, "t", seq(100, 8));
  ASSERT_TRUE(b.ok);
  finish_request(kv, b);
  EXPECT_EQ(kv.conversations("t"), 2);  // over the limit while A is in use
  kv.unlock(reader.blocks);  // now the least recently used one can go
  EXPECT_EQ(kv.conversations("t"), 1);
  EXPECT_EQ(kv.match_prefix("t", seq(0, 9)).cached_tokens, 0);
  EXPECT_EQ(kv.match_prefix("t", seq(100, 9)).cached_tokens, 8);
  auto c = start_request(kv, "t", seq(200, 8));
  ASSERT_TRUE(c.ok);
  finish_request(kv, c);
  EXPECT_EQ(kv.conversations("t"), 1);
  EXPECT_EQ(kv.match_prefix("t", seq(200, 9)).cached_tokens, 8);
}

TEST(KvCacheManager, ThreeTurnConversationReusesEverythingUpToTheLastFullBlock) {
  const int32_t bs = 16;
  KvCacheManager kv(config(bs, 256, 256));
  std::vector<int32_t> history;
  int32_t next_token = 1;
  auto fresh = [&](int32_t n) {
    auto s = seq(next_token, n);
    next_token += n;
    return s;
  };
  const int32_t user_lens[3] = {37, 21, 50};
  const int32_t answer_lens[3] = {11, 30, 17};
  uint64_t expected_reused = 0;
  for (int turn = 0; turn < 3; ++turn) {
    std::vector<int32_t> prompt = concat(history, fresh(user_lens[turn]));
    const std::vector<int32_t> answer = fresh(answer_lens[turn]);
    auto r = start_request(kv, "user", prompt);
    ASSERT_TRUE(r.ok);
    // The previous turn kept the KV of its history minus the last sampled token.
    const int64_t expected = history.empty() ? 0 : static_cast<int64_t>(history.size() - 1) / bs * bs;
    EXPECT_EQ(r.match.cached_tokens, expected) << "turn " << turn;
    expected_reused += static_cast<uint64_t>(expected);
    // Decode: the table grows with the answer; the last sampled token has no KV.
    std::vector<int32_t> with_kv = concat(prompt, std::vector<int32_t>(answer.begin(), answer.end() - 1));
    const int32_t need = testing::blocks_for(static_cast<int64_t>(with_kv.size()), bs) - static_cast<int32_t>(r.table.size());
    auto more = kv.allocate(need);
    ASSERT_TRUE(more.has_value());
    r.table.insert(r.table.end(), more->begin(), more->end());
    r.tokens = with_kv;
    finish_request(kv, r);
    history = concat(prompt, answer);  // the next turn re-sends the assistant message
    EXPECT_EQ(kv.conversations("user"), 1);
  }
  KvCounters c = kv.counters();
  EXPECT_EQ(c.reused_tokens, expected_reused);
  EXPECT_GT(expected_reused, 0u);
  EXPECT_EQ(c.lookups, 3u);
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.evictions, 0u);
}

TEST(KvCacheManager, LockAndUnlockRejectMisuse) {
  KvCacheManager kv(config(4, 4, 4));
  auto got = kv.allocate(2);
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(kv.lock({(*got)[0], 3}));  // 3 is free: nothing locked
  EXPECT_FALSE(kv.unlock({(*got)[0], (*got)[0]}));  // only one reference
  EXPECT_FALSE(kv.unlock({99}));
  EXPECT_TRUE(kv.lock({(*got)[0]}));
  EXPECT_TRUE(kv.unlock({(*got)[0], (*got)[0], (*got)[1]}));
  EXPECT_EQ(kv.counters().free_blocks, 4);
  EXPECT_FALSE(kv.allocate(-1).has_value());
  EXPECT_TRUE(kv.allocate(0).has_value());
}

TEST(KvCacheManager, CountsLookupsHitsAndReusedTokens) {
  KvCacheManager kv(config(4, 16, 16));
  auto a = start_request(kv, "t", seq(0, 12));
  ASSERT_TRUE(a.ok);
  finish_request(kv, a);
  auto b = start_request(kv, "t", seq(0, 14));
  ASSERT_TRUE(b.ok);
  finish_request(kv, b);
  kv.match_prefix("t", seq(0, 14));  // a peek counts nothing
  KvCounters c = kv.counters();
  EXPECT_EQ(c.lookups, 2u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.reused_tokens, 12u);
  EXPECT_EQ(c.inserted_blocks, 3u);
  EXPECT_EQ(c.cached_blocks, 3);
  EXPECT_EQ(c.pool_blocks, 16);
}

}  // namespace
}  // namespace reprox::engine::kv
