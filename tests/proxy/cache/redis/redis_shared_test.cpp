// Two reprox instances (two stores) sharing one real redis-server: a write
// on A is a hit on B, a purge on A is seen by B at once, and the
// cross-instance single-flight lock lets one instance generate.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "proxy/cache/redis/redis_flight_lock.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "proxy/cache/tiered_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/store_options.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::get_sync;
using testing::sample_generation;
using testing::instance_options;
using testing::purge_sync;

TEST(RedisShared, WriteOnAIsAHitOnB) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  auto g = sample_generation("shared");
  a.put("key", g, 60s);
  ASSERT_EQ(get_sync(a, "key").status, LookupStatus::hit);  // A's write has landed
  Lookup l = get_sync(b, "key");
  ASSERT_EQ(l.status, LookupStatus::hit);
  testing::expect_same_generation(*g, *l.entry.generation);
}

TEST(RedisShared, PurgeOnAIsSeenByBAtOnce) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  a.put("m1-a", sample_generation("x", 1, "m1", "ns-a"), 60s);
  a.put("m1-b", sample_generation("x", 1, "m1", "ns-b"), 60s);
  a.put("m2-a", sample_generation("x", 1, "m2", "ns-a"), 60s);
  a.put("m2-b", sample_generation("x", 1, "m2", "ns-b"), 60s);
  auto status = [&](const char* key) { return get_sync(b, key).status; };
  for (const char* key : {"m1-a", "m1-b", "m2-a", "m2-b"})  // A's writes have landed
    ASSERT_EQ(get_sync(a, key).status, LookupStatus::hit) << key;
  ASSERT_EQ(status("m2-b"), LookupStatus::hit);

  ASSERT_TRUE(purge_sync(a, PurgeScope{PurgeScope::Kind::model, "m1"}));
  // The first purge creates epoch:seq from the clock (microseconds), so that
  // it never repeats a value an earlier incarnation of the key had.
  uint64_t first_seq = a.epoch_seq();
  EXPECT_GT(first_seq, 1'600'000'000'000'000u);
  EXPECT_EQ(status("m1-a"), LookupStatus::miss);
  EXPECT_EQ(status("m1-b"), LookupStatus::miss);
  EXPECT_EQ(status("m2-a"), LookupStatus::hit);
  EXPECT_EQ(status("m2-b"), LookupStatus::hit);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:m1-a"}).integer, 0);  // reclaimed on lookup

  ASSERT_TRUE(purge_sync(a, PurgeScope{PurgeScope::Kind::ns, "ns-a"}));
  EXPECT_EQ(status("m2-a"), LookupStatus::miss);
  EXPECT_EQ(status("m2-b"), LookupStatus::hit);

  // Written after the purge: served again.
  a.put("m1-a", sample_generation("fresh", 1, "m1", "ns-a"), 60s);
  EXPECT_EQ(get_sync(a, "m1-a").status, LookupStatus::hit);
  EXPECT_EQ(status("m1-a"), LookupStatus::hit);

  ASSERT_TRUE(purge_sync(a, PurgeScope{PurgeScope::Kind::all, ""}));
  EXPECT_EQ(status("m1-a"), LookupStatus::miss);
  EXPECT_EQ(status("m2-b"), LookupStatus::miss);
  EXPECT_EQ(b.epoch_seq(), first_seq + 2);
}

TEST(RedisShared, PurgeOnADropsBsMemoryTier) {
  testing::RedisServer server;
  MemoryStore mem_a(MemoryStoreOptions{}), mem_b(MemoryStoreOptions{});
  RedisStore redis_a(instance_options(server, "a")), redis_b(instance_options(server, "b"));
  TieredStore a(mem_a, redis_a), b(mem_b, redis_b);
  a.put("k", sample_generation("x", 1, "m1", "ns"), 60s);
  ASSERT_EQ(get_sync(redis_a, "k").status, LookupStatus::hit);
  Lookup first = get_sync(b, "k");
  ASSERT_EQ(first.status, LookupStatus::hit);
  EXPECT_EQ(first.entry.tier, "redis");
  Lookup second = get_sync(b, "k");  // filled into B's L1
  ASSERT_EQ(second.status, LookupStatus::hit);
  EXPECT_EQ(second.entry.tier, "memory");
  EXPECT_EQ(second.entry.stored_unix_ms, first.entry.stored_unix_ms);
  EXPECT_NEAR(double(second.entry.expires_unix_ms), double(first.entry.expires_unix_ms), 1000.0);

  std::promise<std::pair<uint64_t, bool>> done;
  a.purge(PurgeScope{PurgeScope::Kind::model, "m1"}, [&](uint64_t n, bool ok) { done.set_value({n, ok}); });
  auto [removed, ok] = done.get_future().get();
  EXPECT_EQ(removed, 1u);  // A's own L1 copy
  EXPECT_TRUE(ok);
  EXPECT_EQ(get_sync(a, "k").status, LookupStatus::miss);
  // B drops its L1 within the epoch poll interval (20 ms here).
  auto t0 = Clock::now();
  while (get_sync(b, "k").status == LookupStatus::hit && Clock::now() - t0 < 1s) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(get_sync(b, "k").status, LookupStatus::miss);
  EXPECT_LT(Clock::now() - t0, 200ms);
}

FlightLockResult acquire_sync(RedisFlightLock& lock, const std::string& key) {
  std::promise<FlightLockResult> p;
  auto f = p.get_future();
  lock.acquire(key, [&p](FlightLockResult r) { p.set_value(std::move(r)); });
  return f.get();
}

TEST(RedisShared, FollowerWaitsForTheLeadersResult) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  FlightLockOptions fo{10000ms, 3000ms, 10ms};
  RedisFlightLock lock_a(a, fo), lock_b(b, fo);
  ASSERT_EQ(acquire_sync(lock_a, "k").outcome, FlightLockOutcome::leader);
  EXPECT_EQ(server.command({"GET", "reprox:v1:lock:k"}).str, "a");

  std::promise<FlightLockResult> p;
  auto t0 = Clock::now();
  lock_b.acquire("k", [&p](FlightLockResult r) { p.set_value(std::move(r)); });
  std::this_thread::sleep_for(150ms);  // A "generates"
  auto g = sample_generation("from A");
  a.put("k", g, 60s);
  lock_a.release("k");
  FlightLockResult r = p.get_future().get();
  auto waited = Clock::now() - t0;
  ASSERT_EQ(r.outcome, FlightLockOutcome::hit) << to_string(r.outcome);
  testing::expect_same_generation(*g, *r.lookup.entry.generation);
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 1000ms);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:lock:k"}).integer, 0);
}

TEST(RedisShared, WaitIsBounded) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  RedisFlightLock lock_a(a, FlightLockOptions{10000ms, 3000ms, 10ms});
  RedisFlightLock lock_b(b, FlightLockOptions{10000ms, 200ms, 10ms});
  ASSERT_EQ(acquire_sync(lock_a, "k").outcome, FlightLockOutcome::leader);
  auto t0 = Clock::now();
  EXPECT_EQ(acquire_sync(lock_b, "k").outcome, FlightLockOutcome::generate);  // A never stores
  auto waited = Clock::now() - t0;
  EXPECT_GE(waited, 190ms);
  EXPECT_LT(waited, 600ms);
}

TEST(RedisShared, FollowerTakesOverWhenTheLeaderGivesUp) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  FlightLockOptions fo{10000ms, 3000ms, 10ms};
  RedisFlightLock lock_a(a, fo), lock_b(b, fo);
  ASSERT_EQ(acquire_sync(lock_a, "k").outcome, FlightLockOutcome::leader);
  std::promise<FlightLockResult> p;
  lock_b.acquire("k", [&p](FlightLockResult r) { p.set_value(std::move(r)); });
  std::this_thread::sleep_for(50ms);
  lock_b.release("k");  // not B's lock: must not delete it
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server.command({"GET", "reprox:v1:lock:k"}).str, "a");
  lock_a.release("k");  // A failed without storing
  FlightLockResult r = p.get_future().get();
  EXPECT_EQ(r.outcome, FlightLockOutcome::leader);
  EXPECT_EQ(server.command({"GET", "reprox:v1:lock:k"}).str, "b");
}

TEST(RedisShared, ConcurrentMissesOnTwoInstancesGenerateOnce) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a")), b(instance_options(server, "b"));
  FlightLockOptions fo{10000ms, 3000ms, 10ms};
  RedisFlightLock lock_a(a, fo), lock_b(b, fo);
  std::atomic<int> generations{0}, hits{0};
  auto instance = [&](RedisStore& store, RedisFlightLock& lock) {
    for (int i = 0; i < 20; ++i) {
      std::string key = "q" + std::to_string(i);
      FlightLockResult r = acquire_sync(lock, key);
      if (r.outcome == FlightLockOutcome::hit) {
        ++hits;
        continue;
      }
      ++generations;
      std::this_thread::sleep_for(5ms);
      store.put(key, sample_generation(key, 1), 60s);
      if (r.outcome == FlightLockOutcome::leader) lock.release(key);
    }
  };
  std::thread ta([&] { instance(a, lock_a); }), tb([&] { instance(b, lock_b); });
  ta.join();
  tb.join();
  EXPECT_EQ(generations.load(), 20);
  EXPECT_EQ(hits.load(), 20);
}

}  // namespace
}  // namespace reprox
