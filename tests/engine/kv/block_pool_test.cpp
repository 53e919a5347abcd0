#include "engine/kv/block_pool.hpp"

#include <gtest/gtest.h>

namespace reprox::engine::kv {
namespace {

TEST(BlockPool, TakesLowestIdsFirstAndAllOrNothing) {
  BlockPool pool(4);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.take(3, &got));
  EXPECT_EQ(got, (std::vector<BlockId>{0, 1, 2}));
  EXPECT_EQ(pool.free_count(), 1);
  EXPECT_FALSE(pool.take(2, &got));
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(pool.free_count(), 1);
  for (BlockId b : got) EXPECT_EQ(pool.refcount(b), 1);
}

TEST(BlockPool, UnrefFreesUncachedBlocksOnly) {
  BlockPool pool(2);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.take(2, &got));
  pool.set_cached(got[0], true);
  EXPECT_TRUE(pool.unref(got[0]));
  EXPECT_TRUE(pool.unref(got[1]));
  EXPECT_EQ(pool.free_count(), 1);  // got[0] stays cached
  EXPECT_FALSE(pool.unref(got[1]));  // already 0
  EXPECT_TRUE(pool.ref(got[0]));     // a cached block can be locked again
  EXPECT_FALSE(pool.ref(got[1]));    // a free block cannot
  EXPECT_TRUE(pool.unref(got[0]));
  pool.set_cached(got[0], false);
  EXPECT_EQ(pool.free_count(), 2);
  EXPECT_FALSE(pool.ref(7));
  EXPECT_FALSE(pool.unref(-1));
}

}  // namespace
}  // namespace reprox::engine::kv
