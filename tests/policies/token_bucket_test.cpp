// The token bucket behind the per-tenant request rate.
#include <gtest/gtest.h>

#include "policies/token_bucket.hpp"

namespace reprox::policy {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(TokenBucket, StartsFullThenRefusesWithTheWait) {
  TokenBucket b;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(take_token(b, 0, 2.0, 3.0).ok) << i;
  TakeResult r = take_token(b, 0, 2.0, 3.0);
  EXPECT_FALSE(r.ok);
  EXPECT_DOUBLE_EQ(r.wait_s, 0.5);  // 2 tokens a second
}

TEST(TokenBucket, RefillsAtTheRateUpToTheBurst) {
  TokenBucket b;
  for (int i = 0; i < 3; ++i) take_token(b, 0, 2.0, 3.0);
  EXPECT_TRUE(take_token(b, kSecond / 2, 2.0, 3.0).ok);   // one token back after 0.5 s
  EXPECT_FALSE(take_token(b, kSecond / 2, 2.0, 3.0).ok);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(take_token(b, 100 * kSecond, 2.0, 3.0).ok) << i;  // capped at 3
  EXPECT_FALSE(take_token(b, 100 * kSecond, 2.0, 3.0).ok);
}

TEST(TokenBucket, TimeGoingBackwardsRefillsNothing) {
  TokenBucket b;
  take_token(b, 10 * kSecond, 1.0, 1.0);
  EXPECT_FALSE(take_token(b, 5 * kSecond, 1.0, 1.0).ok);
  EXPECT_TRUE(take_token(b, 11 * kSecond, 1.0, 1.0).ok);
}

}  // namespace
}  // namespace reprox::policy
