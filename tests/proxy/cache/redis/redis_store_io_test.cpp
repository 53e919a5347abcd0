// The Redis store's lookups on an I/O thread's own connection
// (run_lookups_on): they are used, a get right after a put still sees the
// put, a purge on another instance is seen at once, and a paused Redis
// answers a miss within the deadline and counts the error.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "proxy/cache/memory_store.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "proxy/cache/tiered_store.hpp"
#include "tests/proxy/cache/redis/io_thread.hpp"
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

// A store whose gets run on an I/O thread, once its channel is connected.
struct IoStore {
  IoStore(const testing::RedisServer& server, const char* id, std::atomic<int>* errors = nullptr)
      : store(instance_options(server, id, errors)) {
    store.run_lookups_on({&io.io()});
  }
  // Gets on the I/O thread until one goes out on the channel (it connects
  // in the background); false after 3 s.
  bool wait_channel() {
    auto until = Clock::now() + 3s;
    while (Clock::now() < until) {
      uint64_t before = store.stats().io_lookups;
      get_sync(on_io, "warm-up");
      if (store.stats().io_lookups > before) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  testing::IoThread io;  // first: outlives the store
  RedisStore store;
  testing::OnIoThreadStore on_io{store, io};
};

TEST(RedisStoreOnIo, LooksUpOnTheIoThreadsConnection) {
  testing::RedisServer server;
  IoStore s(server, "a");
  ASSERT_TRUE(s.wait_channel());
  auto g = sample_generation("via io");
  s.store.put("k", g, 60s);
  ASSERT_EQ(get_sync(s.store, "k").status, LookupStatus::hit);  // landed (executor path)
  uint64_t before = s.store.stats().io_lookups;
  Lookup l = get_sync(s.on_io, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  testing::expect_same_generation(*g, *l.entry.generation);
  EXPECT_EQ(l.entry.tier, "redis");
  EXPECT_EQ(s.store.stats().io_lookups, before + 1);
}

TEST(RedisStoreOnIo, AGetRightAfterAPutSeesIt) {
  testing::RedisServer server;
  IoStore s(server, "a");
  ASSERT_TRUE(s.wait_channel());
  constexpr int kN = 100;
  std::vector<std::future<Lookup>> answers;
  for (int i = 0; i < kN; ++i) {
    auto promise = std::make_shared<std::promise<Lookup>>();
    answers.push_back(promise->get_future());
    std::string key = "k" + std::to_string(i);
    // Put and get on the I/O thread in one task, as a handler would.
    boost::asio::post(s.io.io(), [&s, key, promise] {
      s.store.put(key, sample_generation(key), 60s);
      auto post = [&s](std::function<void()> t) { boost::asio::post(s.io.io(), std::move(t)); };
      s.store.get_on(key, post, [promise](Lookup l) { promise->set_value(std::move(l)); });
    });
  }
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(answers[size_t(i)].wait_for(5s), std::future_status::ready) << i;
    EXPECT_EQ(answers[size_t(i)].get().status, LookupStatus::hit) << i;
  }
  // Once the writes have landed, the same keys go out on the channel.
  uint64_t before = s.store.stats().io_lookups;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(get_sync(s.on_io, "k" + std::to_string(i)).status, LookupStatus::hit);
  EXPECT_GE(s.store.stats().io_lookups, before + 10);
}

TEST(RedisStoreOnIo, APurgeOnAnotherInstanceIsSeenAtOnce) {
  testing::RedisServer server;
  RedisStore a(instance_options(server, "a"));
  IoStore b(server, "b");
  ASSERT_TRUE(b.wait_channel());
  a.put("m1", sample_generation("x", 1, "m1", "ns"), 60s);
  a.put("m2", sample_generation("x", 1, "m2", "ns"), 60s);
  ASSERT_EQ(get_sync(a, "m1").status, LookupStatus::hit);
  ASSERT_EQ(get_sync(a, "m2").status, LookupStatus::hit);
  ASSERT_EQ(get_sync(b.on_io, "m1").status, LookupStatus::hit);
  std::promise<bool> purged;
  a.purge(PurgeScope{PurgeScope::Kind::model, "m1"}, [&](bool ok) { purged.set_value(ok); });
  ASSERT_TRUE(purged.get_future().get());
  uint64_t before = b.store.stats().io_lookups;
  EXPECT_EQ(get_sync(b.on_io, "m1").status, LookupStatus::miss);
  EXPECT_EQ(get_sync(b.on_io, "m2").status, LookupStatus::hit);
  EXPECT_EQ(b.store.stats().io_lookups, before + 2);
}

TEST(RedisStoreOnIo, APausedRedisAnswersAMissWithinTheDeadlineAndCountsIt) {
  testing::RedisServer server;
  std::atomic<int> errors{0};
  auto o = instance_options(server, "a", &errors);
  o.get_deadline = 100ms;
  testing::IoThread io;
  RedisStore store(o);
  store.run_lookups_on({&io.io()});
  testing::OnIoThreadStore on_io{store, io};
  store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);
  auto until = Clock::now() + 3s;
  while (store.stats().io_lookups == 0 && Clock::now() < until) get_sync(on_io, "k");
  ASSERT_GT(store.stats().io_lookups, 0u);
  server.pause();
  uint64_t before = store.stats().io_lookups;
  auto start = Clock::now();
  Lookup l = get_sync(on_io, "k");
  auto took = Clock::now() - start;
  server.resume();
  EXPECT_EQ(l.status, LookupStatus::miss);
  EXPECT_EQ(store.stats().io_lookups, before + 1);
  EXPECT_GE(errors.load(), 1);
  EXPECT_LT(took, 1000ms);  // a bound: the deadline plus the sweep, not a speed figure
  // And it comes back.
  until = Clock::now() + 5s;
  uint64_t now_io = store.stats().io_lookups;
  Lookup back;
  while (Clock::now() < until) {
    back = get_sync(on_io, "k");
    if (back.status == LookupStatus::hit && store.stats().io_lookups > now_io) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(back.status, LookupStatus::hit);
  EXPECT_GT(store.stats().io_lookups, now_io);
}

TEST(RedisStoreOnIo, ScriptFlushOnALiveServerStillAnswers) {
  testing::RedisServer server;
  IoStore s(server, "a");
  ASSERT_TRUE(s.wait_channel());
  s.store.put("k", sample_generation("x"), 60s);
  ASSERT_EQ(get_sync(s.store, "k").status, LookupStatus::hit);
  server.command({"SCRIPT", "FLUSH"});
  uint64_t errors_before = s.store.stats().errors;
  EXPECT_EQ(get_sync(s.on_io, "k").status, LookupStatus::hit);
  EXPECT_EQ(get_sync(s.on_io, "k").status, LookupStatus::hit);
  EXPECT_EQ(s.store.stats().errors, errors_before);
}

// Regression (seen in CI): on an empty Redis the I/O channel's set-up
// creates epoch:seq; the store first saw it on a later poll, after a put had
// filled L1, and the 0 -> seq change cleared L1 for no purge, so the next
// get was answered by Redis. The store now learns epoch:seq when it is built.
TEST(RedisStoreOnIo, TheFirstEpochSeenDoesNotClearL1) {
  testing::RedisServer server;
  IoStore s(server, "a");
  EXPECT_NE(s.store.epoch_seq(), 0u);
  EXPECT_EQ(server.command({"GET", "reprox:v1:epoch:seq"}).str, std::to_string(s.store.epoch_seq()));
  MemoryStore memory{MemoryStoreOptions{1 << 20, 3600s}};
  TieredStore tiered{memory, s.store};
  testing::OnIoThreadStore on_io{tiered, s.io};
  tiered.put("k", sample_generation("in l1"), 60s);
  ASSERT_TRUE(s.wait_channel());
  std::this_thread::sleep_for(100ms);  // five epoch polls
  Lookup l = get_sync(on_io, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  EXPECT_EQ(l.entry.tier, "memory");
}

// A Redis hit hands over the entry's checked bytes: nothing is decoded until
// asked for, and then it is the generation that was stored. In a tiered
// store without an L1 (--cache-bytes 0) an L2 hit is never decoded.
TEST(RedisStoreOnIo, AHitStaysEncodedUntilAskedFor) {
  testing::RedisServer server;
  IoStore s(server, "a");
  ASSERT_TRUE(s.wait_channel());
  auto g = sample_generation("lazy");
  s.store.put("k", g, 60s);
  Lookup l = get_sync(s.on_io, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  ASSERT_NE(l.entry.generation.encoded(), nullptr);
  EXPECT_FALSE(l.entry.generation.decoded());
  testing::expect_same_generation(*g, *l.entry.generation);
  EXPECT_TRUE(l.entry.generation.decoded());

  MemoryStore no_l1{MemoryStoreOptions{0, 3600s}};
  TieredStore tiered{no_l1, s.store};
  testing::OnIoThreadStore tiered_on_io{tiered, s.io};
  Lookup t = get_sync(tiered_on_io, "k");
  ASSERT_EQ(t.status, LookupStatus::hit);
  EXPECT_EQ(t.entry.tier, "redis");
  EXPECT_FALSE(t.entry.generation.decoded());
}

// Hits of one entry on one thread share its checked bytes (CheckedEntryMemo),
// yet a value that changed in Redis, even by one byte at the same size, is
// checked again: a corrupt one is a miss, a new one is the new answer.
TEST(RedisStoreOnIo, RepeatedHitsShareTheCheckedBytesButAChangedValueIsCheckedAgain) {
  testing::RedisServer server;
  std::atomic<int> errors{0};
  IoStore s(server, "a", &errors);
  ASSERT_TRUE(s.wait_channel());
  auto g = sample_generation("memo");
  s.store.put("k", g, 60s);
  ASSERT_EQ(get_sync(s.store, "k").status, LookupStatus::hit);  // landed
  Lookup first = get_sync(s.on_io, "k");
  Lookup second = get_sync(s.on_io, "k");
  ASSERT_EQ(first.status, LookupStatus::hit);
  ASSERT_EQ(second.status, LookupStatus::hit);
  ASSERT_NE(first.entry.generation.bytes(), nullptr);
  EXPECT_EQ(first.entry.generation.bytes(), second.entry.generation.bytes());
  testing::expect_same_generation(*g, *second.entry.generation);

  // The same value with one byte of the encoded generation flipped.
  std::string value = server.command({"GET", "reprox:v1:k"}).str;
  ASSERT_GT(value.size(), 40u);
  std::string corrupt = value;
  corrupt[corrupt.size() - 20] ^= 0x01;
  server.command({"SET", "reprox:v1:k", corrupt});
  int errors_before = errors.load();
  EXPECT_NE(get_sync(s.on_io, "k").status, LookupStatus::hit);
  EXPECT_GT(errors.load(), errors_before);

  auto g2 = sample_generation("memo, second answer");
  s.store.put("k", g2, 60s);
  ASSERT_EQ(get_sync(s.store, "k").status, LookupStatus::hit);  // landed
  Lookup third = get_sync(s.on_io, "k");
  ASSERT_EQ(third.status, LookupStatus::hit);
  testing::expect_same_generation(*g2, *third.entry.generation);
}

}  // namespace
}  // namespace reprox
