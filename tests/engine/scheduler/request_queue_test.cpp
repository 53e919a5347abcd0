#include "engine/scheduler/request_queue.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace reprox::engine::sched {
namespace {

TEST(RequestQueue, RefusesWhenFullAndDrainsInArrivalOrder) {
  RequestQueue<std::string> q(2);
  EXPECT_EQ(q.push(1, "a"), PushResult::kOk);
  EXPECT_EQ(q.push(2, "b"), PushResult::kOk);
  EXPECT_EQ(q.push(3, "c"), PushResult::kFull);  // the caller answers 429
  auto d = q.drain(1);
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0].first, 1u);
  EXPECT_EQ(d.jobs[0].second, "a");
  EXPECT_EQ(q.push(3, "c"), PushResult::kOk);  // room again
  d = q.drain(10);
  ASSERT_EQ(d.jobs.size(), 2u);
  EXPECT_EQ(d.jobs[0].second, "b");
  EXPECT_EQ(d.jobs[1].second, "c");
  EXPECT_EQ(q.size(), 0u);
}

TEST(RequestQueue, WaitWakesOnPushAndCloseRefuses) {
  RequestQueue<int> q(4);
  EXPECT_FALSE(q.wait(std::chrono::milliseconds(1)));
  std::thread producer([&] { q.push(7, 70); });
  EXPECT_TRUE(q.wait(std::chrono::seconds(10)));
  producer.join();
  q.close();
  EXPECT_EQ(q.push(8, 80), PushResult::kClosed);
  EXPECT_EQ(q.drain(10).jobs.size(), 1u);  // queued work stays drainable
  EXPECT_FALSE(q.wait(std::chrono::seconds(10)));  // closed: returns at once
}

struct Tagged {
  std::string tenant;
  int n = 0;
};
struct TenantOf {
  std::string_view operator()(const Tagged& t) const { return t.tenant; }
};

// A burst from one tenant does not hold another tenant's single job behind it.
TEST(RequestQueue, DrainsRoundRobinAcrossKeys) {
  RequestQueue<Tagged, TenantOf> q(100);
  RequestId id = 0;
  for (int i = 0; i < 64; ++i) ASSERT_EQ(q.push(++id, Tagged{"a", i}), PushResult::kOk);
  ASSERT_EQ(q.push(++id, Tagged{"b", 0}), PushResult::kOk);
  ASSERT_EQ(q.push(++id, Tagged{"c", 0}), PushResult::kOk);
  auto d = q.drain(4);
  ASSERT_EQ(d.jobs.size(), 4u);
  EXPECT_EQ(d.jobs[0].second.tenant, "a");
  EXPECT_EQ(d.jobs[1].second.tenant, "b");
  EXPECT_EQ(d.jobs[2].second.tenant, "c");
  EXPECT_EQ(d.jobs[3].second.tenant, "a");
  EXPECT_EQ(d.jobs[3].second.n, 1);  // arrival order within a tenant
  d = q.drain(100);
  ASSERT_EQ(d.jobs.size(), 62u);
  for (int i = 0; i < 62; ++i) EXPECT_EQ(d.jobs[size_t(i)].second.n, i + 2);
  EXPECT_EQ(q.size(), 0u);
}

TEST(RequestQueue, AKeyMayHoldOnlyItsShare) {
  RequestQueue<Tagged, TenantOf> q(8, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(q.push(RequestId(i), Tagged{"a", i}), PushResult::kOk);
  EXPECT_EQ(q.push(9, Tagged{"a", 9}), PushResult::kKeyFull);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(q.push(RequestId(10 + i), Tagged{"b", i}), PushResult::kOk);
  EXPECT_EQ(q.push(20, Tagged{"c", 0}), PushResult::kOk);
  EXPECT_EQ(q.push(21, Tagged{"c", 1}), PushResult::kOk);
  EXPECT_EQ(q.push(22, Tagged{"d", 0}), PushResult::kFull);  // the whole queue's bound still holds
  q.drain(1);
  EXPECT_EQ(q.push(23, Tagged{"a", 4}), PushResult::kOk);  // room in a's share again
}

}  // namespace
}  // namespace reprox::engine::sched
