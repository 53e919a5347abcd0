// RedisIoLookup against a real redis-server, with entries written by the
// store's own put script: it decides hit / stale from the epochs it keeps,
// fetches them again when epoch:seq moves, never deletes, and leaves what
// it cannot decide to the script (`fallback`).
#include <gtest/gtest.h>

#include <future>

#include "proxy/cache/redis/redis_io_lookup.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/io_thread.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Outcome = RedisIoLookup::Outcome;
using testing::get_sync;
using testing::sample_generation;

TEST(EntryHeader, ParsesEveryField) {
  std::string v = "3,0,12,2,6,1700000000123,60000;m1team-aBLOB";
  EntryHeader h;
  ASSERT_TRUE(parse_entry_header(v, h));
  EXPECT_EQ(h.epoch_all, 3u);
  EXPECT_EQ(h.epoch_model, 0u);
  EXPECT_EQ(h.epoch_ns, 12u);
  EXPECT_EQ(h.model, "m1");
  EXPECT_EQ(h.ns, "team-a");
  EXPECT_EQ(h.blob, "BLOB");
  EXPECT_EQ(h.stored_ms, 1700000000123);
  EXPECT_EQ(h.ttl_ms, 60000);
}

TEST(EntryHeader, RejectsMalformedHeaders) {
  EntryHeader h;
  for (const char* bad : {"", "RPXG", "1,2,3;", "1,2,3,4,5,6;xx", "1,2,3,4,5,6,7,8;", "a,0,0,0,0,0,0;",
                          "0,0,0,9,0,0,0;short", "0,0,0,1,9,0,0;short", "-1,0,0,0,0,0,0;"})
    EXPECT_FALSE(parse_entry_header(bad, h)) << bad;
  EXPECT_TRUE(parse_entry_header("0,0,0,0,0,0,0;", h));
}

// A store that writes entries (put script, executor) and a lookup on an I/O
// thread's channel to the same server.
struct LookupFixture {
  explicit LookupFixture(const testing::RedisServer& server, size_t max_epochs = 4096)
      : store([&] {
          auto o = redis_store_options_from_url(server.url());
          o.timeouts.command = 500ms;
          o.get_deadline = 1000ms;
          return o;
        }()) {
    RedisIoChannelOptions o;
    std::string error;
    o.endpoint = *parse_redis_url(server.url(), &error);
    o.timeouts.command = 500ms;
    o.setup = RedisIoLookup::setup_commands("reprox:v1:");
    channel_breaker = std::make_unique<CircuitBreaker>(BreakerOptions{});
    lookup = std::make_unique<RedisIoLookup>(RedisIoChannel::create(io.io(), o, *channel_breaker), "reprox:v1:",
                                             max_epochs);
  }
  ~LookupFixture() {
    io.call([this] {
      lookup->channel().close();
      return 0;
    });
  }
  RedisIoLookup::Result run(const std::string& key) {
    auto until = Clock::now() + 3s;
    while (Clock::now() < until) {
      auto promise = std::make_shared<std::promise<RedisIoLookup::Result>>();
      auto future = promise->get_future();
      bool sent = io.call([&] {
        if (!lookup->try_ready()) return false;
        lookup->lookup(key, Clock::now() + 1s,
                       [promise](RedisIoLookup::Result& r) { promise->set_value(std::move(r)); });
        return true;
      });
      if (sent) {
        if (future.wait_for(3s) != std::future_status::ready) break;
        return future.get();
      }
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "lookup of " << key << " got no answer";
    return {};
  }
  void put(const std::string& key, const std::string& model, const std::string& ns) {
    store.put(key, sample_generation(key, 1, model, ns), 60s);
    ASSERT_EQ(get_sync(store, key).status, LookupStatus::hit);  // landed
  }
  bool purge(PurgeScope scope) {
    std::promise<bool> done;
    store.purge(scope, [&](bool ok) { done.set_value(ok); });
    return done.get_future().get();
  }

  testing::IoThread io;
  RedisStore store;
  std::unique_ptr<CircuitBreaker> channel_breaker;
  std::unique_ptr<RedisIoLookup> lookup;
};

uint64_t mget_calls(const testing::RedisServer& server) {
  std::string info = server.command({"INFO", "commandstats"}).str;
  auto at = info.find("cmdstat_mget:calls=");
  return at == std::string::npos ? 0 : std::stoull(info.substr(at + 19));
}

TEST(RedisIoLookup, AHitNeedsOneMgetOnceTheEpochsAreKept) {
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("k1", "m1", "ns");
  f.put("k2", "m1", "ns");
  uint64_t before = mget_calls(server);
  auto first = f.run("k1");
  ASSERT_EQ(first.outcome, Outcome::hit) << first.error;
  EXPECT_EQ(mget_calls(server), before + 2) << "entry, then the epochs";
  auto second = f.run("k2");
  ASSERT_EQ(second.outcome, Outcome::hit);
  EXPECT_EQ(mget_calls(server), before + 3) << "the same (model, ns): decided from the kept epochs";
  EXPECT_EQ(second.seq, first.seq);
  EntryHeader h;
  ASSERT_TRUE(parse_entry_header(second.value, h));
  EXPECT_EQ(h.model, "m1");
}

TEST(RedisIoLookup, AMissIsOneMget) {
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("warm", "m1", "ns");  // makes sure epoch:seq exists
  uint64_t before = mget_calls(server);
  EXPECT_EQ(f.run("absent").outcome, Outcome::miss);
  EXPECT_EQ(mget_calls(server), before + 1);
}

TEST(RedisIoLookup, APurgeMakesEntriesStaleButDeletesNothing) {
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("m1-a", "m1", "a");
  f.put("m2-a", "m2", "a");
  f.put("m1-b", "m1", "b");
  ASSERT_EQ(f.run("m1-a").outcome, Outcome::hit);
  ASSERT_EQ(f.run("m2-a").outcome, Outcome::hit);
  ASSERT_EQ(f.run("m1-b").outcome, Outcome::hit);
  uint64_t seq_before = f.run("m1-a").seq;

  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::model, "m1"}));
  auto stale = f.run("m1-a");
  EXPECT_EQ(stale.outcome, Outcome::stale);
  EXPECT_EQ(stale.seq, seq_before + 1);
  EXPECT_EQ(f.run("m1-b").outcome, Outcome::stale);
  EXPECT_EQ(f.run("m2-a").outcome, Outcome::hit);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:m1-a"}).integer, 1) << "a lookup never deletes";

  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::ns, "a"}));
  EXPECT_EQ(f.run("m2-a").outcome, Outcome::stale);
  f.put("m2-a", "m2", "a");  // written after the purge
  EXPECT_EQ(f.run("m2-a").outcome, Outcome::hit);

  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::all, ""}));
  EXPECT_EQ(f.run("m2-a").outcome, Outcome::stale);
}

TEST(RedisIoLookup, AMissingSeqIsLeftToTheScript) {
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("k", "m1", "ns");
  ASSERT_EQ(f.run("k").outcome, Outcome::hit);
  server.command({"DEL", "reprox:v1:epoch:seq"});
  EXPECT_EQ(f.run("k").outcome, Outcome::fallback);
  // The next purge recreates it from the clock, far above any earlier value.
  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::model, "m1"}));
  auto after = f.run("k");
  EXPECT_EQ(after.outcome, Outcome::stale);
  EXPECT_GT(after.seq, 1'600'000'000'000'000u);
}

TEST(RedisIoLookup, ARecreatedSeqNeverRepeatsAValueWhoseEpochsAreKept) {
  // Were epoch:seq recreated by a bare INCR, it would read 1 again after
  // the purge below, and the epochs kept for seq 1 (model epoch 0) would
  // serve the purged entry.
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("old", "m1", "ns");  // model epoch 0
  server.command({"SET", "reprox:v1:epoch:seq", "1"});
  auto kept = f.run("old");
  ASSERT_EQ(kept.outcome, Outcome::hit);
  ASSERT_EQ(kept.seq, 1u);
  server.command({"DEL", "reprox:v1:epoch:seq"});  // lost (restart, eviction, FLUSHDB of that key)
  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::model, "m1"}));
  auto after = f.run("old");
  EXPECT_NE(after.seq, 1u);
  EXPECT_EQ(after.outcome, Outcome::stale);
}

TEST(RedisIoLookup, TheEpochTableIsBounded) {
  testing::RedisServer server;
  LookupFixture f(server, 2);
  for (const char* ns : {"a", "b", "c", "d"}) f.put(std::string("k-") + ns, "m", ns);
  for (int round = 0; round < 3; ++round)
    for (const char* ns : {"a", "b", "c", "d"}) EXPECT_EQ(f.run(std::string("k-") + ns).outcome, Outcome::hit) << ns;
  ASSERT_TRUE(f.purge(PurgeScope{PurgeScope::Kind::ns, "c"}));
  for (const char* ns : {"a", "b", "d"}) EXPECT_EQ(f.run(std::string("k-") + ns).outcome, Outcome::hit) << ns;
  EXPECT_EQ(f.run("k-c").outcome, Outcome::stale);
}

TEST(RedisIoLookup, AnUnparsableEntryIsHandedOverAsIs) {
  testing::RedisServer server;
  LookupFixture f(server);
  f.put("warm", "m1", "ns");
  server.command({"SET", "reprox:v1:junk", "not an entry"});
  auto r = f.run("junk");
  EXPECT_EQ(r.outcome, Outcome::hit);
  EXPECT_EQ(r.value, "not an entry");
}

}  // namespace
}  // namespace reprox
