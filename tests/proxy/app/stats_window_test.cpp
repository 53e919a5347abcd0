// StatsWindow: window deltas against the live totals, the ring's bound,
// hit rates and the step history.
#include <gtest/gtest.h>

#include <algorithm>

#include "proxy/app/stats_window.hpp"

namespace reprox {
namespace {

// A sample at `t` seconds with `hits` hits and `misses` misses so far.
StatsSample at(double t, double hits, double misses, double tokens = 0) {
  StatsSample s;
  s.t = t;
  s.v[kStatHit] = hits;
  s.v[kStatMiss] = misses;
  s.v[kStatGeneratedTokens] = tokens;
  return s;
}

TEST(StatsWindow, EmptyWindowIsEmpty) {
  StatsWindow w(10);
  StatsDelta d = w.delta(at(5, 1, 1), 60);
  EXPECT_EQ(d.span_s, 0);
  EXPECT_LT(d.hit_rate(), 0);
}

TEST(StatsWindow, YoungerThanTheWindowCountsEverything) {
  StatsWindow w(100);
  w.add(at(0, 0, 0));
  w.add(at(2, 1, 1));
  StatsDelta d = w.delta(at(3, 3, 1, 30), 60);
  EXPECT_DOUBLE_EQ(d.span_s, 3);
  EXPECT_DOUBLE_EQ(d.v[kStatHit], 3);
  EXPECT_DOUBLE_EQ(d.v[kStatMiss], 1);
  EXPECT_DOUBLE_EQ(d.lookups(), 4);
  EXPECT_DOUBLE_EQ(d.hit_rate(), 0.75);
  EXPECT_DOUBLE_EQ(d.per_s(kStatGeneratedTokens), 10);
}

TEST(StatsWindow, TheWindowStartsAtTheOldestSampleInside) {
  StatsWindow w(1000);
  for (int t = 0; t <= 200; t += 2) w.add(at(t, t, 0));  // one hit per second
  // now = 201: the 60 s window starts at the sample of t = 142 (>= 141).
  StatsDelta d = w.delta(at(201, 201, 0), 60);
  EXPECT_DOUBLE_EQ(d.span_s, 59);
  EXPECT_DOUBLE_EQ(d.v[kStatHit], 59);
  EXPECT_DOUBLE_EQ(d.per_s(kStatHit), 1);
  EXPECT_DOUBLE_EQ(d.hit_rate(), 1);
  // A sample exactly at the window's start is inside it.
  d = w.delta(at(200, 200, 0), 60);
  EXPECT_DOUBLE_EQ(d.span_s, 60);
}

TEST(StatsWindow, NearHitsCountAsHitsBypassAsLookups) {
  StatsWindow w(4);
  w.add(StatsSample{});
  StatsSample live;
  live.t = 10;
  live.v[kStatNearHit] = 1;
  live.v[kStatBypass] = 2;
  live.v[kStatCoalesced] = 1;
  StatsDelta d = w.delta(live, 60);
  EXPECT_DOUBLE_EQ(d.lookups(), 4);
  EXPECT_DOUBLE_EQ(d.hit_rate(), 0.25);
}

TEST(StatsWindow, RingDropsTheOldest) {
  StatsWindow w(5);
  for (int t = 0; t < 20; ++t) w.add(at(t, t, 0));
  EXPECT_EQ(w.size(), 5u);
  // Kept: t = 15..19. A 60 s window can only go back to 15.
  StatsDelta d = w.delta(at(20, 20, 0), 60);
  EXPECT_DOUBLE_EQ(d.span_s, 5);
  EXPECT_DOUBLE_EQ(d.v[kStatHit], 5);
}

TEST(StatsWindow, NoSampleInsideUsesTheNewest) {
  StatsWindow w(5);
  w.add(at(0, 0, 0));
  w.add(at(10, 4, 0));
  StatsDelta d = w.delta(at(100, 10, 0), 60);  // the timer stalled
  EXPECT_DOUBLE_EQ(d.span_s, 90);
  EXPECT_DOUBLE_EQ(d.v[kStatHit], 6);
}

TEST(StatsWindow, HistoryStepsOldestFirst) {
  StatsWindow w(1000);
  // 100 s of samples every 2 s: hits in the first 50 s, misses after.
  for (int t = 0; t <= 100; t += 2) w.add(at(t, std::min(t, 50), std::max(0, t - 50)));
  auto steps = w.history(at(100, 50, 50), 25, 6);  // steps end at -25..100 s
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_EQ(steps[0].span_s, 0);  // ends at -25: before the first sample
  EXPECT_EQ(steps[1].span_s, 0);  // ends at 0
  EXPECT_DOUBLE_EQ(steps[2].span_s, 24);  // 0..24 (the sample at or before 25)
  EXPECT_DOUBLE_EQ(steps[2].hit_rate(), 1);
  EXPECT_DOUBLE_EQ(steps[3].hit_rate(), 1);  // 24..50
  EXPECT_DOUBLE_EQ(steps[5].hit_rate(), 0);  // 74..100
  EXPECT_DOUBLE_EQ(steps[5].lookups(), 26);
}

TEST(StatsWindow, CountersThatGoBackGiveZero) {
  StatsWindow w(4);
  w.add(at(0, 10, 10));
  StatsDelta d = w.delta(at(1, 5, 12), 60);
  EXPECT_DOUBLE_EQ(d.v[kStatHit], 0);
  EXPECT_DOUBLE_EQ(d.v[kStatMiss], 2);
}

}  // namespace
}  // namespace reprox
