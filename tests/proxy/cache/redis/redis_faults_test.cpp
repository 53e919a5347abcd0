// Fault tolerance against a real redis-server: down at start, stalled
// (SIGSTOP), killed and restarted. The store must answer every get within
// its deadline, count what it skipped, open the breaker, and recover.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "proxy/cache/redis/redis_store.hpp"
#include "proxy/cache/tiered_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::get_sync;
using testing::sample_generation;

struct ErrorCounts {
  std::mutex mutex;
  std::map<std::string, int> by_op;
  int total() {
    std::lock_guard lock(mutex);
    int n = 0;
    for (auto& [op, c] : by_op) n += c;
    return n;
  }
  int of(const std::string& op) {
    std::lock_guard lock(mutex);
    return by_op[op];
  }
};

RedisStoreOptions chaos_options(const std::string& url, ErrorCounts& errors) {
  auto o = redis_store_options_from_url(url);
  o.timeouts.connect = 100ms;
  o.timeouts.command = 50ms;
  o.breaker = BreakerOptions{5, 200ms, 1000ms};
  o.on_error = [&errors](const char* op) {
    std::lock_guard lock(errors.mutex);
    ++errors.by_op[op];
  };
  return o;
}

// Runs `n` gets one after another; returns the slowest answer.
std::chrono::milliseconds slowest_get(CacheStore& store, int n, int* hits = nullptr) {
  auto worst = Clock::duration::zero();
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    Lookup l = get_sync(store, "k");
    worst = std::max(worst, Clock::now() - t0);
    if (hits && l.status == LookupStatus::hit) ++*hits;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(worst);
}

// Polls until `pred` holds or `limit` passes.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit) {
  auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

TEST(RedisFaults, DownAtStartAnswersMissesQuickly) {
  ErrorCounts errors;
  int port = testing::free_loopback_port();  // nothing listens there
  RedisStore store(chaos_options("redis://127.0.0.1:" + std::to_string(port), errors));
  store.put("k", sample_generation("x"), 60s);
  int hits = 0;
  auto worst = slowest_get(store, 30, &hits);
  EXPECT_EQ(hits, 0);
  EXPECT_LE(worst.count(), 50 + 40);
  EXPECT_GE(errors.of("get"), 30);
  EXPECT_TRUE(eventually([&] { return !store.healthy(); }, 1000ms));
  EXPECT_NE(store.state(), BreakerState::closed);
}

TEST(RedisFaults, StalledRedisOpensBreakerAndRecovers) {
  testing::RedisServer server;
  ErrorCounts errors;
  RedisStore store(chaos_options(server.url(), errors));
  store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);

  server.pause();
  auto worst = slowest_get(store, 40);
  EXPECT_LE(worst.count(), 50 + 40) << "a get outlived the command timeout";
  EXPECT_TRUE(eventually([&] { return store.state() != BreakerState::closed; }, 1000ms));
  EXPECT_GE(errors.of("get"), 1);
  store.put("k2", sample_generation("y"), 60s);  // skipped while open
  EXPECT_GE(errors.of("put"), 1);
  // Still bounded while the breaker probes a stalled Redis.
  std::this_thread::sleep_for(500ms);
  EXPECT_LE(slowest_get(store, 20).count(), 50 + 40);

  server.resume();
  auto resumed = Clock::now();
  EXPECT_TRUE(eventually([&] { return get_sync(store, "k").status == LookupStatus::hit; }, 3000ms));
  EXPECT_TRUE(store.healthy());
  std::cerr << "recovered " << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - resumed).count()
            << " ms after SIGCONT; errors counted: " << errors.total() << "\n";
}

TEST(RedisFaults, KilledRedisRestartedReconnects) {
  testing::RedisServer server;
  ErrorCounts errors;
  RedisStore store(chaos_options(server.url(), errors));
  store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);

  server.kill_hard();
  EXPECT_LE(slowest_get(store, 20).count(), 50 + 40);
  EXPECT_TRUE(eventually([&] { return !store.healthy(); }, 1000ms));
  server.start();  // same port, empty: the data died with it
  EXPECT_TRUE(eventually(
      [&] {
        store.put("k", sample_generation("again"), 60s);
        return get_sync(store, "k").status == LookupStatus::hit;
      },
      3000ms));
  EXPECT_TRUE(store.healthy());
  EXPECT_GT(errors.total(), 0);
}

TEST(RedisFaults, FullQueueFailsFast) {
  testing::RedisServer server;
  ErrorCounts errors;
  auto o = chaos_options(server.url(), errors);
  o.connections = 1;
  o.queue_capacity = 4;
  o.timeouts.command = 300ms;
  o.get_deadline = 1000ms;
  o.breaker.failure_threshold = 1000;  // keep it closed: test the queue alone
  RedisStore store(o);
  ASSERT_EQ(get_sync(store, "warm").status, LookupStatus::miss);
  server.pause();
  std::atomic<int> answered{0};
  auto t0 = Clock::now();
  for (int i = 0; i < 50; ++i) store.get("k" + std::to_string(i), [&](Lookup) { ++answered; });
  // At most one batch in flight (<= the queue size) plus a full queue wait;
  // the rest fail at once.
  EXPECT_GE(answered.load(), 40);
  EXPECT_LT(Clock::now() - t0, 50ms);
  for (int i = 0; i < 10; ++i) store.put("p" + std::to_string(i), sample_generation("x"), 60s);
  EXPECT_GE(errors.of("put"), 6);
  server.resume();
  EXPECT_TRUE(eventually([&] { return answered.load() == 50; }, 2000ms));
}

TEST(RedisFaults, TieredStoreServesL1WhileRedisIsDown) {
  testing::RedisServer server;
  ErrorCounts errors;
  MemoryStore memory(MemoryStoreOptions{});
  RedisStore redis(chaos_options(server.url(), errors));
  TieredStore tiered(memory, redis);
  tiered.put("k", sample_generation("x"), 60s);
  server.pause();
  Lookup l = get_sync(tiered, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  EXPECT_EQ(l.entry.tier, "memory");
  EXPECT_LE(slowest_get(tiered, 20).count(), 50 + 40);
  EXPECT_EQ(get_sync(tiered, "other").status, LookupStatus::miss);
  EXPECT_TRUE(eventually(
      [&] {
        get_sync(tiered, "other");
        return tiered.health() == "degraded";
      },
      2000ms));
  server.resume();
  EXPECT_TRUE(eventually([&] { return tiered.health() == "ok"; }, 3000ms));
}

}  // namespace
}  // namespace reprox
