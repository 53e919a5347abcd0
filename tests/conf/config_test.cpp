// The TOML loader: the shipped conf/reprox.toml states the defaults, the
// [redis] section reaches Config, and bad or unknown keys are errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "conf/config.hpp"

namespace reprox {
namespace {

struct TempToml {
  std::string path;
  explicit TempToml(const std::string& text) {
    char name[] = "/tmp/reprox-conf-test-XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp");
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempToml() { std::remove(path.c_str()); }
};

std::string load_error(const std::string& text) {
  TempToml file(text);
  Config c;
  try {
    load_config_file(file.path, c);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigFile, ShippedFileStatesTheDefaults) {
  Config loaded;
  load_config_file(std::string(REPROX_SOURCE_DIR) + "/conf/reprox.toml", loaded);
  Config d;
  EXPECT_EQ(loaded.redis, d.redis);
  EXPECT_EQ(loaded.redis_connect_timeout_ms, d.redis_connect_timeout_ms);
  EXPECT_EQ(loaded.redis_command_timeout_ms, d.redis_command_timeout_ms);
  EXPECT_EQ(loaded.redis_connections, d.redis_connections);
  EXPECT_EQ(loaded.redis_io_lookups, d.redis_io_lookups);
  EXPECT_EQ(loaded.redis_queue_capacity, d.redis_queue_capacity);
  EXPECT_EQ(loaded.redis_breaker_failures, d.redis_breaker_failures);
  EXPECT_EQ(loaded.redis_breaker_cooldown_ms, d.redis_breaker_cooldown_ms);
  EXPECT_EQ(loaded.redis_epoch_poll_ms, d.redis_epoch_poll_ms);
  EXPECT_EQ(loaded.redis_lock_wait_ms, d.redis_lock_wait_ms);
  EXPECT_EQ(loaded.redis_stats_interval_ms, d.redis_stats_interval_ms);
  EXPECT_EQ(loaded.audit_every, d.audit_every);
  EXPECT_EQ(loaded.audit_max_in_flight, d.audit_max_in_flight);
  EXPECT_EQ(loaded.cache_bytes, d.cache_bytes);
  EXPECT_EQ(loaded.cache_ttl, d.cache_ttl);
  EXPECT_EQ(loaded.listen, d.listen);
  EXPECT_EQ(loaded.kv_budget, d.kv_budget);
  EXPECT_EQ(loaded.kv_block_size, d.kv_block_size);
  EXPECT_EQ(loaded.kv_conversations_per_user, d.kv_conversations_per_user);
  EXPECT_EQ(loaded.max_batch_size, d.max_batch_size);
  EXPECT_EQ(loaded.max_step_tokens, d.max_step_tokens);
  EXPECT_EQ(loaded.prefill_chunk, d.prefill_chunk);
  EXPECT_EQ(loaded.working_kv, d.working_kv);
  EXPECT_EQ(loaded.engine_queue, d.engine_queue);
  // The documented defaults: connect about 100 ms, command about 50 ms.
  EXPECT_EQ(d.redis_connect_timeout_ms, 100);
  EXPECT_EQ(d.redis_command_timeout_ms, 50);
}

TEST(ConfigFile, EngineBatchingKeysReachConfig) {
  TempToml file(R"([engine]
kv_block_size = 32
kv_conversations_per_user = 3
max_batch_size = 8
max_step_tokens = 1024
prefill_chunk = 128
working_kv = 268435456
queue = 9
)");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.kv_block_size, 32);
  EXPECT_EQ(c.kv_conversations_per_user, 3);
  EXPECT_EQ(c.max_batch_size, 8);
  EXPECT_EQ(c.max_step_tokens, 1024);
  EXPECT_EQ(c.prefill_chunk, 128);
  EXPECT_EQ(c.working_kv, 268435456u);
  EXPECT_EQ(c.engine_queue, 9);
  EXPECT_NE(load_error("[engine]\nmax_batch_sizes = 8\n").find("max_batch_sizes"), std::string::npos);
}

TEST(ConfigFile, RedisSectionReachesConfig) {
  TempToml file(R"([cache]
redis = "redis://127.0.0.1:6400/2"
[redis]
connect_timeout_ms = 250
command_timeout_ms = 20
connections = 2
io_lookups = false
queue_capacity = 64
breaker_failures = 3
breaker_cooldown_ms = 500
epoch_poll_ms = 40
lock_wait_ms = 0
stats_interval_ms = 0
)");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.redis, "redis://127.0.0.1:6400/2");
  EXPECT_EQ(c.redis_connect_timeout_ms, 250);
  EXPECT_EQ(c.redis_command_timeout_ms, 20);
  EXPECT_EQ(c.redis_connections, 2);
  EXPECT_FALSE(c.redis_io_lookups);
  EXPECT_EQ(c.redis_queue_capacity, 64);
  EXPECT_EQ(c.redis_breaker_failures, 3);
  EXPECT_EQ(c.redis_breaker_cooldown_ms, 500);
  EXPECT_EQ(c.redis_epoch_poll_ms, 40);
  EXPECT_EQ(c.redis_lock_wait_ms, 0);
  EXPECT_EQ(c.redis_stats_interval_ms, 0);
}

TEST(ConfigFile, AuditSectionReachesConfig) {
  TempToml file("[audit]\nevery = 100\nmax_in_flight = 3\n");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.audit_every, 100);
  EXPECT_EQ(c.audit_max_in_flight, 3);
  EXPECT_NE(load_error("[audit]\nevery = -1\n").find("audit.every must be a non-negative integer"), std::string::npos);
  EXPECT_NE(load_error("[audit]\nmax_in_flight = 0\n").find("audit.max_in_flight must be an integer >= 1"),
            std::string::npos);
  EXPECT_NE(load_error("[audit]\nrate = 0.1\n").find("unknown key audit.rate"), std::string::npos);
}

TEST(ConfigFile, UnknownKeysAreRejected) {
  EXPECT_NE(load_error("[redis]\ncommand_timeout = 50\n").find("unknown key redis.command_timeout"), std::string::npos);
  EXPECT_NE(load_error("[redis]\nurl = \"redis://x\"\n").find("unknown key redis.url"), std::string::npos);
  EXPECT_NE(load_error("[cache]\nredis_pool = 4\n").find("unknown key cache.redis_pool"), std::string::npos);
  EXPECT_NE(load_error("[rediss]\nconnections = 4\n").find("unknown key rediss.connections"), std::string::npos);
  EXPECT_EQ(load_error("[redis]\nconnections = 8\n"), "");
}

TEST(ConfigFile, BadRedisValuesAreRejected) {
  EXPECT_NE(load_error("[redis]\nconnections = 0\n").find("redis.connections must be an integer >= 1"), std::string::npos);
  EXPECT_NE(load_error("[redis]\ncommand_timeout_ms = 0\n").find("redis.command_timeout_ms"), std::string::npos);
  EXPECT_NE(load_error("[redis]\nconnect_timeout_ms = -5\n").find("redis.connect_timeout_ms"), std::string::npos);
  EXPECT_NE(load_error("[redis]\nepoch_poll_ms = \"fast\"\n").find("redis.epoch_poll_ms"), std::string::npos);
  EXPECT_NE(load_error("[redis]\nlock_wait_ms = -1\n").find("redis.lock_wait_ms must be a non-negative integer"),
            std::string::npos);
}

}  // namespace
}  // namespace reprox
