// RedisTierCounter (reprox_cache_{entries,bytes}{tier="redis"}) and the
// EVALSHA fallback, against a real redis-server.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "proxy/cache/redis/redis_counter.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/store_options.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using testing::get_sync;
using testing::sample_generation;
using testing::purge_sync;
using testing::store_options;

// Waits (bounded) until a pass that started after this call has completed.
RedisTierCount next_pass(const RedisTierCounter& counter) {
  uint64_t start = counter.snapshot().passes;
  for (int i = 0; i < 400; ++i) {
    auto s = counter.snapshot();
    if (s.passes >= start + 2) return s;  // the pass in progress may predate the call
    std::this_thread::sleep_for(10ms);
  }
  ADD_FAILURE() << "no counting pass completed within 4 s";
  return counter.snapshot();
}

long long strlen_of(const testing::RedisServer& server, const std::string& key) {
  return server.command({"STRLEN", "reprox:v1:" + key}).integer;
}

TEST(RedisCounter, CountsLiveEntriesAndTheirBytes) {
  testing::RedisServer server;
  RedisStore store(store_options(server));
  RedisCounterOptions co;
  co.interval = 20ms;
  co.step_keys = 2;  // several SCAN steps per pass
  RedisTierCounter counter(store, co);
  for (int i = 0; i < 7; ++i) store.put("k" + std::to_string(i), sample_generation("v" + std::to_string(i)), 60s);
  ASSERT_EQ(get_sync(store, "k6").status, LookupStatus::hit);  // every put has landed
  // Other keys under the prefix are not entries; keys outside it are ignored.
  server.command({"SET", "reprox:v1:lock:k0", "someone", "PX", "60000"});
  server.command({"SET", "other:thing", "x"});
  auto s = next_pass(counter);
  long long bytes = 0;
  for (int i = 0; i < 7; ++i) bytes += strlen_of(server, "k" + std::to_string(i));
  EXPECT_EQ(s.entries, 7u);
  EXPECT_EQ(s.bytes, uint64_t(bytes));
  EXPECT_EQ(s.reclaimed_total, 0u);

  long long k0_bytes = strlen_of(server, "k0");
  store.erase("k0");
  ASSERT_EQ(get_sync(store, "k0").status, LookupStatus::miss);
  s = next_pass(counter);
  EXPECT_EQ(s.entries, 6u);
  EXPECT_EQ(s.bytes, uint64_t(bytes - k0_bytes));
}

TEST(RedisCounter, PurgedEntriesAreNotCountedAndAreReclaimed) {
  testing::RedisServer server;
  RedisStore store(store_options(server));
  RedisCounterOptions co;
  co.interval = 20ms;
  RedisTierCounter counter(store, co);
  store.put("a1", sample_generation("x", 1, "model-a"), 60s);
  store.put("a2", sample_generation("y", 1, "model-a"), 60s);
  store.put("b1", sample_generation("z", 1, "model-b"), 60s);
  ASSERT_EQ(get_sync(store, "b1").status, LookupStatus::hit);
  EXPECT_EQ(next_pass(counter).entries, 3u);

  ASSERT_TRUE(purge_sync(store, PurgeScope{PurgeScope::Kind::model, "model-a"}));
  auto s = next_pass(counter);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, uint64_t(strlen_of(server, "b1")));
  EXPECT_EQ(s.reclaimed_total, 2u);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:a1"}).integer, 0);  // deleted, not left for the TTL
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:b1"}).integer, 1);
}

TEST(RedisCounter, LongNamesAndLargeValues) {
  testing::RedisServer server;
  RedisStore store(store_options(server));
  RedisCounterOptions co;
  co.interval = 20ms;
  RedisTierCounter counter(store, co);
  std::string long_model(400, 'm'), long_ns(300, 'n');
  auto big = sample_generation(std::string(1 << 20, 'x'), 1, long_model, long_ns);  // a 1 MiB answer
  store.put("big", big, 60s);
  store.put("small", sample_generation("y", 1, "other", long_ns), 60s);
  ASSERT_EQ(get_sync(store, "small").status, LookupStatus::hit);
  auto s = next_pass(counter);
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, uint64_t(strlen_of(server, "big") + strlen_of(server, "small")));
  // The names are read past the first 256 bytes of the value: a purge of
  // the long model reclaims exactly its entry.
  ASSERT_TRUE(purge_sync(store, PurgeScope{PurgeScope::Kind::model, long_model}));
  s = next_pass(counter);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.reclaimed_total, 1u);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:big"}).integer, 0);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:small"}).integer, 1);
}

TEST(RedisCounter, KeepsTheLastCountWhileRedisIsDown) {
  testing::RedisServer server;
  auto o = store_options(server);
  o.timeouts.command = 50ms;
  o.get_deadline = 50ms;
  RedisStore store(o);
  RedisCounterOptions co;
  co.interval = 20ms;
  RedisTierCounter counter(store, co);
  store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);
  ASSERT_EQ(next_pass(counter).entries, 1u);
  server.kill_hard();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(counter.snapshot().entries, 1u);  // never blocks, keeps the last value
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  server.start();
  // Counting resumes once Redis is back (an empty Redis: 0 entries).
  bool zero = false;
  for (int i = 0; i < 500 && !zero; ++i) {
    zero = counter.snapshot().entries == 0;
    if (!zero) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(zero) << "the count did not resume after Redis came back";
}

TEST(RedisScripts, LookupsSurviveAScriptFlush) {
  testing::RedisServer server;
  RedisStore store(store_options(server));
  store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);
  // Lookups go by EVALSHA: after SCRIPT FLUSH Redis answers NOSCRIPT, and
  // the connection re-sends the script (EVAL) transparently.
  server.command({"SCRIPT", "FLUSH"});
  auto l = get_sync(store, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  testing::expect_same_generation(*sample_generation("x"), *l.entry.generation);
  server.command({"SCRIPT", "FLUSH"});
  store.put("k2", sample_generation("y"), 60s);
  EXPECT_EQ(get_sync(store, "k2").status, LookupStatus::hit);
  server.command({"SCRIPT", "FLUSH"});
  EXPECT_TRUE(purge_sync(store, PurgeScope{}));
  EXPECT_EQ(get_sync(store, "k").status, LookupStatus::miss);
  EXPECT_EQ(store.stats().errors, 0u);
}

}  // namespace
}  // namespace reprox
