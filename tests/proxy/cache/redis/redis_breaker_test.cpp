#include "proxy/cache/redis/redis_breaker.hpp"

#include <gtest/gtest.h>

namespace reprox {
namespace {

using namespace std::chrono_literals;

TEST(CircuitBreaker, OpensAfterConsecutiveFailuresOnly) {
  CircuitBreaker b(BreakerOptions{3, 100ms, 400ms});
  auto t0 = CircuitBreaker::Clock::now();
  b.on_failure(t0);
  b.on_failure(t0);
  b.on_success();  // resets the run
  b.on_failure(t0);
  b.on_failure(t0);
  EXPECT_TRUE(b.allow());
  b.on_failure(t0);
  EXPECT_FALSE(b.allow());
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST(CircuitBreaker, OneProbeAfterCooldownThenBackoff) {
  CircuitBreaker b(BreakerOptions{1, 100ms, 400ms});
  auto t0 = CircuitBreaker::Clock::now();
  b.on_failure(t0);
  EXPECT_FALSE(b.try_probe(t0 + 99ms));
  EXPECT_TRUE(b.try_probe(t0 + 100ms));
  EXPECT_EQ(b.state(), BreakerState::half_open);
  EXPECT_FALSE(b.try_probe(t0 + 100ms));  // only one probe at a time
  EXPECT_FALSE(b.allow());
  b.on_failure(t0 + 110ms);  // probe failed: cool-down doubles
  EXPECT_FALSE(b.try_probe(t0 + 300ms));
  EXPECT_TRUE(b.try_probe(t0 + 310ms));
  b.on_failure(t0 + 310ms);  // 400 ms (cap)
  b.on_failure(t0 + 310ms);  // late failure while open changes nothing
  EXPECT_FALSE(b.try_probe(t0 + 709ms));
  EXPECT_TRUE(b.try_probe(t0 + 710ms));
  b.on_success();
  EXPECT_TRUE(b.allow());
  EXPECT_EQ(b.state(), BreakerState::closed);
  b.on_failure(t0 + 1s);  // cool-down back to its base
  EXPECT_TRUE(b.try_probe(t0 + 1s + 100ms));
}

}  // namespace
}  // namespace reprox
