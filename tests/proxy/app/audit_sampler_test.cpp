#include <gtest/gtest.h>

#include "proxy/app/audit_sampler.hpp"

namespace reprox {
namespace {

TEST(AuditSampler, PicksOneHitInN) {
  AuditSampler off(0);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(off.pick());
  AuditSampler every_third(3);
  int picked = 0;
  for (int i = 0; i < 30; ++i) picked += every_third.pick() ? 1 : 0;
  EXPECT_EQ(picked, 10);
  AuditSampler all(1);
  EXPECT_TRUE(all.pick());
  EXPECT_TRUE(all.pick());
}

}  // namespace
}  // namespace reprox
