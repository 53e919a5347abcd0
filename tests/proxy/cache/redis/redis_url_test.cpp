#include "proxy/cache/redis/redis_url.hpp"

#include <gtest/gtest.h>

#include "proxy/cache/redis/redis_store.hpp"

namespace reprox {
namespace {

TEST(RedisUrl, TcpForms) {
  auto a = parse_redis_url("redis://localhost", nullptr);
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->is_unix);
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, 6379);
  EXPECT_EQ(a->db, 0);
  EXPECT_TRUE(a->password.empty());

  auto b = parse_redis_url("redis://:s%40cret@10.0.0.5:6380/3", nullptr);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "10.0.0.5");
  EXPECT_EQ(b->port, 6380);
  EXPECT_EQ(b->db, 3);
  EXPECT_EQ(b->password, "s@cret");
  EXPECT_TRUE(b->username.empty());
  EXPECT_EQ(b->describe().find("s@cret"), std::string::npos);

  auto c = parse_redis_url("redis://app:pw@[::1]:7000/?command_timeout_ms=20&connect_timeout_ms=300", nullptr);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 7000);
  EXPECT_EQ(c->username, "app");
  EXPECT_EQ(c->password, "pw");
  EXPECT_EQ(c->command_timeout_ms, 20);
  EXPECT_EQ(c->connect_timeout_ms, 300);
}

TEST(RedisUrl, UnixForms) {
  auto a = parse_redis_url("unix:///run/redis.sock", nullptr);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->is_unix);
  EXPECT_EQ(a->path, "/run/redis.sock");
  auto b = parse_redis_url("unix://:pw@/tmp/r.sock?db=2", nullptr);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->path, "/tmp/r.sock");
  EXPECT_EQ(b->password, "pw");
  EXPECT_EQ(b->db, 2);
}

TEST(RedisUrl, MalformedUrlsAreErrors) {
  for (const char* bad : {"", "localhost:6379", "http://x", "redis://", "redis://:6379", "redis://h:0",
                          "redis://h:70000", "redis://h:port", "redis://h/notadb", "redis://h/-1",
                          "redis://[::1", "redis://h?timeout=5", "redis://h?db", "redis://:@h",
                          "redis://:p%zz@h", "redis://:p%4@h", "unix://", "unix://relative.sock",
                          "redis://h?command_timeout_ms=x"}) {
    std::string error;
    EXPECT_FALSE(parse_redis_url(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  EXPECT_THROW(redis_store_options_from_url("redis://h:notaport"), std::invalid_argument);
}

}  // namespace
}  // namespace reprox
