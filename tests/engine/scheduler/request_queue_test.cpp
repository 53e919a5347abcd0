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

}  // namespace
}  // namespace reprox::engine::sched
