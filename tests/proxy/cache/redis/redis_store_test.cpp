// RedisStore against a real redis-server: URL forms (AUTH, SELECT, unix
// socket) and the layout of what it writes.
#include <gtest/gtest.h>

#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using testing::get_sync;
using testing::sample_generation;

RedisStoreOptions options_for(const std::string& url, std::atomic<int>* errors = nullptr) {
  auto o = redis_store_options_from_url(url);
  o.timeouts.command = 500ms;
  o.get_deadline = 1000ms;
  if (errors) o.on_error = [errors](const char*) { ++*errors; };
  return o;
}

TEST(RedisStore, WritesPrefixedKeysWithTtl) {
  testing::RedisServer server;
  RedisStore store(options_for(server.url()));
  store.put("abc123", sample_generation("x"), 30s);
  ASSERT_EQ(get_sync(store, "abc123").status, LookupStatus::hit);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:abc123"}).integer, 1);
  long long pttl = server.command({"PTTL", "reprox:v1:abc123"}).integer;
  EXPECT_GT(pttl, 28000);
  EXPECT_LE(pttl, 30000);
  // Nothing else is written but epoch:seq, which the store creates at start.
  EXPECT_EQ(server.command({"DBSIZE"}).integer, 2);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:epoch:seq"}).integer, 1);
}

TEST(RedisStore, CorruptValueIsAMissAndCounted) {
  testing::RedisServer server;
  std::atomic<int> errors{0};
  RedisStore store(options_for(server.url(), &errors));
  server.command({"SET", "reprox:v1:bad", "0,0,0,1,0,0,1000;mRPXG\x01garbage"});
  server.command({"SET", "reprox:v1:worse", "not even a header"});
  EXPECT_EQ(get_sync(store, "bad").status, LookupStatus::miss);
  EXPECT_EQ(get_sync(store, "worse").status, LookupStatus::miss);
  EXPECT_EQ(errors.load(), 2);
}

TEST(RedisStore, AuthWithPassword) {
  testing::RedisServer server(testing::RedisServerOptions{"s3cret pw", false});
  RedisStore store(options_for("redis://:s3cret%20pw@127.0.0.1:" + std::to_string(server.port())));
  store.put("k", sample_generation("auth"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);
  EXPECT_TRUE(store.healthy());

  std::atomic<int> errors{0};
  RedisStore wrong(options_for("redis://:nope@127.0.0.1:" + std::to_string(server.port()), &errors));
  EXPECT_EQ(get_sync(wrong, "k").status, LookupStatus::miss);
  EXPECT_GE(errors.load(), 1);
  RedisStore none(options_for("redis://127.0.0.1:" + std::to_string(server.port())));
  EXPECT_EQ(get_sync(none, "k").status, LookupStatus::miss);  // NOAUTH
}

TEST(RedisStore, SelectsDatabase) {
  testing::RedisServer server;
  RedisStore db3(options_for(server.url(3)));
  RedisStore db0(options_for(server.url()));
  db3.put("k", sample_generation("db3"), 60s);
  ASSERT_EQ(get_sync(db3, "k").status, LookupStatus::hit);
  EXPECT_EQ(get_sync(db0, "k").status, LookupStatus::miss);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:k"}, 3).integer, 1);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:k"}, 0).integer, 0);
}

TEST(RedisStore, UnixSocketUrl) {
  testing::RedisServer server(testing::RedisServerOptions{"", true});
  RedisStore store(options_for("unix://" + server.socket_path() + "?db=1"));
  store.put("k", sample_generation("unix"), 60s);
  ASSERT_EQ(get_sync(store, "k").status, LookupStatus::hit);
  EXPECT_EQ(server.command({"EXISTS", "reprox:v1:k"}, 1).integer, 1);
}

TEST(RedisStore, AnswersFromTheRedisTier) {
  testing::RedisServer server;
  RedisStore store(options_for(server.url()));
  store.put("k", sample_generation("tier"), 60s);
  Lookup l = get_sync(store, "k");
  ASSERT_EQ(l.status, LookupStatus::hit);
  EXPECT_EQ(l.entry.tier, "redis");
  EXPECT_EQ(store.stats().hits, 1u);
}

}  // namespace
}  // namespace reprox
