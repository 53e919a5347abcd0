// RecentRequests: bounded at its capacity (50), newest first, fields cut to
// size, and whole entries under concurrent writers.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "proxy/app/recent_requests.hpp"

namespace reprox {
namespace {

std::string key_of(int writer, int i) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%04x%012x", writer, i);
  return buf;
}

TEST(RecentRequests, EmptyAtFirst) {
  RecentRequests r;
  EXPECT_EQ(r.capacity(), 50u);
  EXPECT_TRUE(r.newest_first().empty());
}

TEST(RecentRequests, NewestFirstAndBoundedAtFifty) {
  RecentRequests r;
  for (int i = 0; i < 120; ++i) r.record(1000 + i, i * 0.5, "abcdef01", key_of(0, i), 200, "hit", "memory");
  auto all = r.newest_first();
  ASSERT_EQ(all.size(), 50u);
  for (size_t j = 0; j < all.size(); ++j) {
    const int i = 119 - int(j);
    EXPECT_EQ(all[j].time_ms, 1000 + i);
    EXPECT_DOUBLE_EQ(all[j].latency_ms, i * 0.5);
    EXPECT_EQ(std::string(all[j].key), key_of(0, i));
  }
}

TEST(RecentRequests, FewerThanCapacity) {
  RecentRequests r;
  r.record(1, 1, "t", "k1", 200, "miss", "");
  r.record(2, 2, "t", "k2", 504, "error", "");
  auto all = r.newest_first();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_STREQ(all[0].key, "k2");
  EXPECT_EQ(all[0].status, 504);
  EXPECT_STREQ(all[0].cache, "error");
  EXPECT_STREQ(all[1].key, "k1");
  EXPECT_STREQ(all[1].cache, "miss");
  EXPECT_STREQ(all[1].tier, "");
}

TEST(RecentRequests, CutsFieldsToPrefixes) {
  RecentRequests r;
  const std::string tenant(64, 'a'), key = "0123456789abcdef0123456789abcdef";
  r.record(1, 1, tenant, key, 200, "coalesced", "memory-and-more");
  auto e = r.newest_first().at(0);
  EXPECT_EQ(std::string(e.tenant), std::string(8, 'a'));
  EXPECT_EQ(std::string(e.key), "0123456789abcdef");
  EXPECT_STREQ(e.cache, "coalesced");
  EXPECT_STREQ(e.tier, "memory-");
}

TEST(RecentRequests, SmallCapacity) {
  RecentRequests r(3);
  for (int i = 0; i < 5; ++i) r.record(i, 0, "", key_of(0, i), 200, "hit", "");
  auto all = r.newest_first();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].time_ms, 4);
  EXPECT_EQ(all[2].time_ms, 2);
}

// Writers record (writer, i) with time = i; a reader copies meanwhile.
// Every copy holds whole entries (key, time and latency agree) and, per
// writer, newer entries first; the final copy holds the last 50 written.
TEST(RecentRequests, ConcurrentWritersKeepEntriesWhole) {
  constexpr int kWriters = 8, kEach = 20000;
  RecentRequests r;
  std::atomic<bool> go{false}, done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      while (!go) std::this_thread::yield();
      for (int i = 0; i < kEach; ++i) r.record(i, double(w), "", key_of(w, i), 200 + w, "hit", "memory");
    });
  }
  size_t checked = 0;
  std::thread reader([&] {
    while (!go) std::this_thread::yield();
    while (!done) {
      auto all = r.newest_first();
      EXPECT_LE(all.size(), 50u);
      std::map<int, int64_t> last_time;  // per writer: the time of its entry seen last (newer)
      for (const auto& e : all) {
        const int w = int(e.latency_ms);
        ASSERT_EQ(std::string(e.key), key_of(w, int(e.time_ms)));
        ASSERT_EQ(e.status, 200 + w);
        auto it = last_time.find(w);
        if (it != last_time.end()) {
          ASSERT_LT(e.time_ms, it->second);
        }
        last_time[w] = e.time_ms;
      }
      ++checked;
    }
  });
  go = true;
  for (auto& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_GT(checked, 0u);
  auto all = r.newest_first();
  ASSERT_EQ(all.size(), 50u);
  // Each writer's last entry was written after its earlier ones, so the
  // ring's newest entries per writer end at kEach - 1 for the last writers.
  std::map<int, int64_t> newest;
  for (const auto& e : all)
    if (!newest.count(int(e.latency_ms))) newest[int(e.latency_ms)] = e.time_ms;
  for (const auto& [w, t] : newest) EXPECT_EQ(t, kEach - 1) << "writer " << w;
}

}  // namespace
}  // namespace reprox
