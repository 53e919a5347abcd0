// One conformance suite over the CacheStore interface, instantiated for the
// memory, Redis and tiered stores. The Redis-backed stores run against a
// real redis-server that the suite starts (tests/proxy/cache/redis/redis_server.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "proxy/cache/memory_store.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "proxy/cache/tiered_store.hpp"
#include "tests/proxy/cache/redis/io_thread.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/shared_redis.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using testing::conformance_redis_options;
using testing::shared_redis;
using testing::expect_same_generation;
using testing::get_sync;
using testing::sample_generation;

// Owns a store and whatever it stands on.
struct Harness {
  virtual ~Harness() = default;
  virtual CacheStore& store() = 0;
  virtual const char* hit_tier() const = 0;  // the tier a get right after put answers from
  // Milliseconds the key has left where the store keeps it (-1: absent);
  // the Redis stores are asked with PTTL, the source of truth there.
  virtual int64_t remaining_ms(const std::string& key) {
    Lookup l = get_sync(store(), key);
    return l.status == LookupStatus::hit ? l.entry.expires_unix_ms - now_unix_ms() : -1;
  }
};

int64_t redis_pttl(const std::string& key) {
  auto reply = shared_redis().command({"PTTL", "reprox:v1:" + key});
  return reply.integer;
}

struct MemoryHarness : Harness {
  MemoryStore memory{MemoryStoreOptions{64ull << 20, 3600s}};
  CacheStore& store() override { return memory; }
  const char* hit_tier() const override { return "memory"; }
};

struct RedisHarness : Harness {
  RedisHarness() { shared_redis().command({"FLUSHALL"}); }
  RedisStore redis{conformance_redis_options()};
  CacheStore& store() override { return redis; }
  const char* hit_tier() const override { return "redis"; }
  int64_t remaining_ms(const std::string& key) override { return redis_pttl(key); }
};

struct TieredHarness : Harness {
  TieredHarness() { shared_redis().command({"FLUSHALL"}); }
  MemoryStore memory{MemoryStoreOptions{64ull << 20, 3600s}};
  RedisStore redis{conformance_redis_options()};
  TieredStore tiered{memory, redis};
  CacheStore& store() override { return tiered; }
  const char* hit_tier() const override { return "memory"; }
  // Both tiers must have it: the less of the two.
  int64_t remaining_ms(const std::string& key) override {
    return std::min(Harness::remaining_ms(key), redis_pttl(key));
  }
};

// The same stores with every get made on an I/O thread: the Redis store then
// looks up on that thread's own connection (RedisIoChannel).
struct RedisOnIoHarness : Harness {
  RedisOnIoHarness() {
    shared_redis().command({"FLUSHALL"});
    redis.run_lookups_on({&io.io()});
  }
  testing::IoThread io;  // first: outlives the store
  RedisStore redis{conformance_redis_options()};
  testing::OnIoThreadStore on_io{redis, io};
  CacheStore& store() override { return on_io; }
  const char* hit_tier() const override { return "redis"; }
  int64_t remaining_ms(const std::string& key) override { return redis_pttl(key); }
};

struct TieredOnIoHarness : Harness {
  TieredOnIoHarness() {
    shared_redis().command({"FLUSHALL"});
    redis.run_lookups_on({&io.io()});
  }
  testing::IoThread io;
  MemoryStore memory{MemoryStoreOptions{64ull << 20, 3600s}};
  RedisStore redis{conformance_redis_options()};
  TieredStore tiered{memory, redis};
  testing::OnIoThreadStore on_io{tiered, io};
  CacheStore& store() override { return on_io; }
  const char* hit_tier() const override { return "memory"; }
  int64_t remaining_ms(const std::string& key) override {
    return std::min(Harness::remaining_ms(key), redis_pttl(key));
  }
};

struct StoreKind {
  const char* name;
  std::function<std::unique_ptr<Harness>()> make;
};

class CacheStoreConformance : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { harness_ = GetParam().make(); }
  CacheStore& store() { return harness_->store(); }
  std::unique_ptr<Harness> harness_;
};

TEST_P(CacheStoreConformance, MissOnEmpty) {
  EXPECT_EQ(get_sync(store(), "0123abcd").status, LookupStatus::miss);
}

TEST_P(CacheStoreConformance, PutThenGetReturnsEqualGeneration) {
  auto g = sample_generation("hello");
  store().put("k1", g, 60s);
  Lookup l = get_sync(store(), "k1");
  ASSERT_EQ(l.status, LookupStatus::hit);
  ASSERT_TRUE(l.entry.generation);
  expect_same_generation(*g, *l.entry.generation);
  EXPECT_EQ(l.entry.tier, harness_->hit_tier());
  int64_t now = now_unix_ms();
  EXPECT_LE(l.entry.stored_unix_ms, now);
  EXPECT_GT(l.entry.stored_unix_ms, now - 10000);
  EXPECT_GT(l.entry.expires_unix_ms, now + 50000);
  EXPECT_LE(l.entry.expires_unix_ms, now + 61000);
}

TEST_P(CacheStoreConformance, ComparesFullKeys) {
  store().put("abc", sample_generation("short"), 60s);
  store().put("abcd", sample_generation("long"), 60s);
  EXPECT_EQ(get_sync(store(), "ab").status, LookupStatus::miss);
  EXPECT_EQ(get_sync(store(), "abcde").status, LookupStatus::miss);
  Lookup a = get_sync(store(), "abc"), b = get_sync(store(), "abcd");
  ASSERT_EQ(a.status, LookupStatus::hit);
  ASSERT_EQ(b.status, LookupStatus::hit);
  EXPECT_EQ(a.entry.generation->events[1].delta.content, "short #0");
  EXPECT_EQ(b.entry.generation->events[1].delta.content, "long #0");
}

TEST_P(CacheStoreConformance, ExpiresAfterTtl) {
  store().put("short-lived", sample_generation("x"), 1s);
  ASSERT_EQ(get_sync(store(), "short-lived").status, LookupStatus::hit);
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(get_sync(store(), "short-lived").status, LookupStatus::miss);
}

TEST_P(CacheStoreConformance, DefaultTtlWhenZero) {
  store().put("default-ttl", sample_generation("x"), 0s);
  Lookup l = get_sync(store(), "default-ttl");
  ASSERT_EQ(l.status, LookupStatus::hit);
  EXPECT_GT(l.entry.expires_unix_ms, now_unix_ms() + 3000 * 1000);
}

TEST_P(CacheStoreConformance, OverwriteReplaces) {
  store().put("k", sample_generation("first"), 60s);
  store().put("k", sample_generation("second"), 60s);
  Lookup l = get_sync(store(), "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  EXPECT_EQ(l.entry.generation->events[1].delta.content, "second #0");
}

// Hot keys: extend() moves the expiry later, never earlier, and ignores
// absent keys. Redis applies it asynchronously: poll for it.
TEST_P(CacheStoreConformance, ExtendLengthensNeverShortens) {
  store().put("hot", sample_generation("x"), 60s);
  store().extend("hot", 3600s);
  int64_t left = 0;
  for (int i = 0; i < 200 && (left = harness_->remaining_ms("hot")) < 600 * 1000; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_GT(left, 3500 * 1000);
  EXPECT_LE(left, 3600 * 1000);
  store().extend("hot", 10s);  // shorter: ignored
  store().extend("absent", 3600s);
  std::this_thread::sleep_for(50ms);
  EXPECT_GT(harness_->remaining_ms("hot"), 3500 * 1000);
  EXPECT_EQ(get_sync(store(), "absent").status, LookupStatus::miss);
}

TEST_P(CacheStoreConformance, EraseRemovesOnlyThatKey) {
  store().put("k", sample_generation("x"), 60s);
  store().put("k2", sample_generation("y"), 60s);
  store().erase("k");
  EXPECT_EQ(get_sync(store(), "k").status, LookupStatus::miss);
  EXPECT_EQ(get_sync(store(), "k2").status, LookupStatus::hit);
}

TEST_P(CacheStoreConformance, ClearRemovesEverything) {
  for (int i = 0; i < 20; ++i) store().put("key" + std::to_string(i), sample_generation("x"), 60s);
  store().clear();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(get_sync(store(), "key" + std::to_string(i)).status, LookupStatus::miss) << i;
  store().put("after", sample_generation("y"), 60s);
  EXPECT_EQ(get_sync(store(), "after").status, LookupStatus::hit);
}

TEST_P(CacheStoreConformance, NeverStoresIncompleteGenerations) {
  auto g = sample_generation("x", 2);
  g->events.back().finish_reason.clear();  // choice 1 never finished
  ASSERT_FALSE(g->complete());
  store().put("incomplete", g, 60s);
  store().put("null", nullptr, 60s);
  EXPECT_EQ(get_sync(store(), "incomplete").status, LookupStatus::miss);
  EXPECT_EQ(get_sync(store(), "null").status, LookupStatus::miss);
}

TEST_P(CacheStoreConformance, ConcurrentGetsAndPuts) {
  constexpr int kThreads = 4, kKeys = 50;
  std::atomic<int> wrong{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        store().put(key, sample_generation(key, 1), 60s);
        // Every thread also reads the others' keys: absent or right, never wrong.
        for (int u = 0; u < kThreads; ++u) {
          std::string other = "t" + std::to_string(u) + "-" + std::to_string(i);
          Lookup l = get_sync(store(), other, 5000ms);
          if (l.status != LookupStatus::hit) continue;
          if (u == t) ++hits;
          if (l.entry.generation->events[1].delta.content != other + " #0") ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(hits.load(), kThreads * kKeys);  // a thread always reads its own write
}

TEST_P(CacheStoreConformance, LargeEntries) {
  auto g = std::make_shared<Generation>();
  g->model = "m";
  g->n_choices = 1;
  std::string piece(4096, 'z');
  for (int i = 0; i < 1000; ++i) g->events.push_back(GenEvent{0, Delta{piece + std::to_string(i), "", "{}"}, ""});
  g->events.back().finish_reason = "length";
  store().put("large", g, 60s);
  Lookup l = get_sync(store(), "large", 5000ms);
  ASSERT_EQ(l.status, LookupStatus::hit);
  expect_same_generation(*g, *l.entry.generation);
}

// get_on: the answer (hit or miss) runs only inside `post`, exactly once,
// on the thread that runs the posted task.
TEST_P(CacheStoreConformance, GetOnAnswersThroughPost) {
  store().put("posted", sample_generation("p"), 60s);
  for (const char* key : {"posted", "posted", "absent"}) {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::function<void()>> tasks;
    std::atomic<int> answers{0};
    std::thread::id answered_on;
    Lookup got;
    store().get_on(
        key,
        [&](std::function<void()> task) {
          std::lock_guard lock(m);
          tasks.push_back(std::move(task));
          cv.notify_all();
        },
        [&](Lookup l) {
          ++answers;
          answered_on = std::this_thread::get_id();
          got = std::move(l);
        });
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return !tasks.empty(); })) << key << ": nothing was posted";
    EXPECT_EQ(answers.load(), 0) << key << ": answered outside post";
    auto run = std::move(tasks);
    tasks.clear();
    lock.unlock();
    for (auto& t : run) t();
    EXPECT_EQ(answers.load(), 1) << key;
    EXPECT_EQ(answered_on, std::this_thread::get_id()) << key;
    if (std::string(key) == "posted") {
      ASSERT_EQ(got.status, LookupStatus::hit) << key;
      expect_same_generation(*sample_generation("p"), *got.entry.generation);
    } else {
      EXPECT_NE(got.status, LookupStatus::hit);
    }
  }
}

// --cache-bytes 0: the memory tier stores nothing, and an L2-only tiered
// store answers every hit from Redis.
TEST(MemoryStoreOff, ZeroBytesStoresNothing) {
  MemoryStore off{MemoryStoreOptions{0, 3600s}};
  off.put("k", sample_generation("x"), 60s);
  EXPECT_EQ(get_sync(off, "k").status, LookupStatus::miss);
  EXPECT_EQ(off.stats().entries, 0u);
}

TEST(MemoryStoreOff, TieredWithNoMemoryTierAnswersFromRedis) {
  shared_redis().command({"FLUSHALL"});
  MemoryStore off{MemoryStoreOptions{0, 3600s}};
  RedisStore redis{conformance_redis_options()};
  TieredStore tiered{off, redis};
  tiered.put("k", sample_generation("x"), 60s);
  for (int i = 0; i < 3; ++i) {
    Lookup l = get_sync(tiered, "k");
    ASSERT_EQ(l.status, LookupStatus::hit) << i;
    EXPECT_EQ(l.entry.tier, "redis") << i;
  }
  EXPECT_EQ(off.stats().entries, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Stores, CacheStoreConformance,
    ::testing::Values(StoreKind{"memory", [] { return std::unique_ptr<Harness>(new MemoryHarness); }},
                      StoreKind{"redis", [] { return std::unique_ptr<Harness>(new RedisHarness); }},
                      StoreKind{"tiered", [] { return std::unique_ptr<Harness>(new TieredHarness); }},
                      StoreKind{"redis_on_io", [] { return std::unique_ptr<Harness>(new RedisOnIoHarness); }},
                      StoreKind{"tiered_on_io", [] { return std::unique_ptr<Harness>(new TieredOnIoHarness); }}),
    [](const ::testing::TestParamInfo<StoreKind>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace reprox
