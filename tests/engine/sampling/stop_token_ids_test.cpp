#include "engine/sampling/stop_token_ids.hpp"

#include <gtest/gtest.h>

namespace reprox::engine {
namespace {

TEST(StopTokenIds, MergesGenerationConfigAndTokenizerEos) {
  const auto ids = StopTokenIds::from_model({151645, 151643}, 151643);
  EXPECT_EQ(ids.ids(), (std::vector<int32_t>{151643, 151645}));
  EXPECT_TRUE(ids.contains(151645));
  EXPECT_TRUE(ids.contains(151643));
  EXPECT_FALSE(ids.contains(151644));

  EXPECT_EQ(StopTokenIds::from_model({}, 2).ids(), (std::vector<int32_t>{2}));
  EXPECT_TRUE(StopTokenIds::from_model({}, std::nullopt).empty());
  EXPECT_EQ(StopTokenIds({5, -1, 3, 5}).ids(), (std::vector<int32_t>{3, 5}));
  EXPECT_FALSE(StopTokenIds{}.contains(0));
}

}  // namespace
}  // namespace reprox::engine
