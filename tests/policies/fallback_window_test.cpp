// The greedy fallback's window: the mismatch rate over the last W audits,
// and the rule that engages the fallback only over a full window.
#include <gtest/gtest.h>

#include "policies/fallback_window.hpp"

namespace reprox::policy {
namespace {

TEST(AuditWindow, EngagesOnlyWhenFullAndAboveThreshold) {
  AuditWindow w(20);
  for (int i = 0; i < 19; ++i) w.record(true);
  EXPECT_FALSE(fallback_engages(w, 0.05));  // 19 of 19 mismatched, but not a full window yet
  w.record(true);
  EXPECT_TRUE(fallback_engages(w, 0.05));
}

TEST(AuditWindow, ThresholdIsStrictlyAbove) {
  AuditWindow w(20);
  w.record(true);  // 1/20 = 5%
  for (int i = 0; i < 19; ++i) w.record(false);
  EXPECT_DOUBLE_EQ(w.mismatch_rate(), 0.05);
  EXPECT_FALSE(fallback_engages(w, 0.05));
  w.record(true);  // the oldest (a mismatch) falls out: still 1/20
  EXPECT_FALSE(fallback_engages(w, 0.05));
  w.record(true);  // 2/20 = 10%
  EXPECT_TRUE(fallback_engages(w, 0.05));
}

TEST(AuditWindow, SlidesOldOutcomesOut) {
  AuditWindow w(4);
  for (bool m : {true, true, false, false}) w.record(m);
  EXPECT_EQ(w.mismatches(), 2u);
  w.record(false);
  w.record(false);
  EXPECT_EQ(w.mismatches(), 0u);
  EXPECT_EQ(w.size(), 4u);
}

TEST(AuditWindow, ClearEmptiesIt) {
  AuditWindow w(3);
  for (int i = 0; i < 3; ++i) w.record(true);
  w.clear();
  EXPECT_EQ(w.size(), 0u);
  EXPECT_EQ(w.mismatches(), 0u);
  EXPECT_FALSE(fallback_engages(w, 0.0));
}

}  // namespace
}  // namespace reprox::policy
