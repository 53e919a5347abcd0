// The TOML loader: the shipped conf/reprox.toml states the defaults, every
// section reaches Config, sizes and durations take units, [[cache.rule]]
// tables are read in order, and bad or unknown keys are errors that name
// FILE:LINE.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "conf/config.hpp"
#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

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
  EXPECT_EQ(loaded.admin_listen, d.admin_listen);
  EXPECT_EQ(loaded.kv_budget, d.kv_budget);
  EXPECT_EQ(loaded.kv_block_size, d.kv_block_size);
  EXPECT_EQ(loaded.kv_conversations_per_user, d.kv_conversations_per_user);
  EXPECT_EQ(loaded.max_batch_size, d.max_batch_size);
  EXPECT_EQ(loaded.max_step_tokens, d.max_step_tokens);
  EXPECT_EQ(loaded.prefill_chunk, d.prefill_chunk);
  EXPECT_EQ(loaded.working_kv, d.working_kv);
  EXPECT_EQ(loaded.kv_slots, d.kv_slots);
  EXPECT_EQ(loaded.cuda_graphs, d.cuda_graphs);
  EXPECT_EQ(loaded.engine_queue, d.engine_queue);
  EXPECT_EQ(loaded.engine_threads, d.engine_threads);
  EXPECT_EQ(loaded.hot_hits, d.hot_hits);
  EXPECT_EQ(loaded.hot_window, d.hot_window);
  EXPECT_EQ(loaded.store_truncated, d.store_truncated);
  EXPECT_EQ(loaded.near_index_bytes, d.near_index_bytes);
  EXPECT_EQ(loaded.fallback, d.fallback);
  EXPECT_EQ(loaded.fallback_window, d.fallback_window);
  EXPECT_EQ(loaded.fallback_threshold, d.fallback_threshold);
  EXPECT_EQ(loaded.audit_log, d.audit_log);
  EXPECT_EQ(loaded.audit_prompts, d.audit_prompts);
  EXPECT_EQ(loaded.access_log, d.access_log);
  EXPECT_EQ(loaded.audit_queue, d.audit_queue);
  EXPECT_TRUE(loaded.rules.empty());  // the example rule is commented out
  // Every key: the printed values match the defaults, and the file sets each.
  const std::string printed = describe_config(loaded);
  EXPECT_EQ(printed.find("# default"), std::string::npos) << printed;
  loaded.sources.clear();
  EXPECT_EQ(describe_config(loaded), describe_config(d));
  // The documented defaults: connect about 100 ms, command about 50 ms.
  EXPECT_EQ(d.redis_connect_timeout_ms, 100);
  EXPECT_EQ(d.redis_command_timeout_ms, 50);
  EXPECT_EQ(d.engine_threads, 0);  // every core
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
cuda_graphs = false
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
  EXPECT_FALSE(c.cuda_graphs);
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


TEST(ConfigFile, SizesAndDurationsTakeUnits) {
  TempToml file(R"([server]
header_limit = "16KiB"
body_limit = "2 MB"
read_timeout_ms = "30s"
drain_timeout_ms = "1m30s"
[cache]
bytes = "16GiB"
ttl = "24h"
hot_window = "15m"
[engine]
kv_budget = "1.5GB"
working_kv = 4096
[upstream]
first_byte_timeout_ms = "2m"
)");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.header_limit, 16u * 1024);
  EXPECT_EQ(c.body_limit, 2'000'000u);
  EXPECT_EQ(c.read_timeout_ms, 30'000);
  EXPECT_EQ(c.drain_timeout_ms, 90'000);
  EXPECT_EQ(c.cache_bytes, 16ull << 30);
  EXPECT_EQ(c.cache_ttl, 86'400);
  EXPECT_EQ(c.hot_window, 900);
  EXPECT_EQ(c.kv_budget, 1'500'000'000u);
  EXPECT_EQ(c.working_kv, 4096u);
  EXPECT_EQ(c.upstream_first_byte_timeout_ms, 120'000);
}

TEST(ConfigFile, NewKeysReachConfig) {
  TempToml file(R"([cache]
hot_hits = 5
hot_window = 60
store_truncated = false
near_index_bytes = "1MiB"
[audit]
fallback = false
fallback_window = 50
fallback_threshold = 0.25
[log]
audit = "/var/log/reprox/audit.jsonl"
audit_prompts = true
access = true
queue = 100
)");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.hot_hits, 5);
  EXPECT_EQ(c.hot_window, 60);
  EXPECT_FALSE(c.store_truncated);
  EXPECT_EQ(c.near_index_bytes, 1u << 20);
  EXPECT_FALSE(c.fallback);
  EXPECT_EQ(c.fallback_window, 50);
  EXPECT_DOUBLE_EQ(c.fallback_threshold, 0.25);
  EXPECT_EQ(c.audit_log, "/var/log/reprox/audit.jsonl");
  EXPECT_TRUE(c.audit_prompts);
  EXPECT_TRUE(c.access_log);
  EXPECT_EQ(c.audit_queue, 100);
}

TEST(ConfigFile, BadNewKeyValuesAreRejected) {
  struct Case {
    const char* toml;
    const char* message;
  };
  const Case cases[] = {
      {"[audit]\nfallback_threshold = 1.5\n", ":2: audit.fallback_threshold must be a number between 0 and 1"},
      {"[audit]\nfallback_threshold = 2\n", ":2: audit.fallback_threshold must be a number between 0 and 1"},
      {"[audit]\nfallback_threshold = \"0.1\"\n", ":2: audit.fallback_threshold must be a number between 0 and 1"},
      {"[audit]\nfallback_window = 0\n", ":2: audit.fallback_window must be an integer >= 1"},
      {"[audit]\nfallback = 1\n", ":2: audit.fallback must be true or false"},
      {"[log]\nqueue = 0\n", ":2: log.queue must be an integer >= 1"},
      {"[log]\naudit = 1\n", ":2: log.audit must be a string"},
      {"[cache]\nhot_hits = -1\n", ":2: cache.hot_hits must be a non-negative integer"},
      {"[cache]\nhot_window = \"1w\"\n", ":2: cache.hot_window: bad duration '1w' (units: ms, s, m, h, d)"},
      {"[cache]\nttl = \"1500ms\"\n", ":2: cache.ttl: bad duration '1500ms': not a whole number of seconds"},
      {"[cache]\nbytes = -1\n", ":2: cache.bytes must be a non-negative integer"},
      {"[cache]\nbytes = 1.5\n", ":2: cache.bytes must be a size"},
      {"[redis]\nconnect_timeout_ms = \"0s\"\n", ":2: redis.connect_timeout_ms must be at least 1 ms"},
      {"[server]\nthreads = 3000000000\n", ":2: server.threads must be at most 1024"},
      {"[engine]\nthreads = 100000\n", ":2: engine.threads must be at most 1024"},
      {"[redis]\nconnections = 2000\n", ":2: redis.connections must be at most 1024"},
      // Values that serve would refuse (or run uselessly with) at start.
      {"[server]\nmax_connections = 0\n", ":2: server.max_connections must be an integer >= 1"},
      {"[engine]\nmax_batch_size = 0\n", ":2: engine.max_batch_size must be an integer >= 1"},
      {"[engine]\nkv_block_size = 0\n", ":2: engine.kv_block_size must be an integer >= 1"},
      {"[engine]\nkv_conversations_per_user = 0\n", ":2: engine.kv_conversations_per_user must be an integer >= 1"},
      {"[engine]\nmax_step_tokens = 0\n", ":2: engine.max_step_tokens must be an integer >= 1"},
      {"[engine]\nprefill_chunk = 0\n", ":2: engine.prefill_chunk must be an integer >= 1"},
      {"[engine]\nqueue = 0\n", ":2: engine.queue must be an integer >= 1"},
      {"[engine]\ndefault_max_tokens = 0\n", ":2: engine.default_max_tokens must be an integer >= 1"},
      {"[upstream]\ndefault_max_tokens = 0\n", ":2: upstream.default_max_tokens must be an integer >= 1"},
  };
  for (const Case& c : cases) {
    std::string error = load_error(c.toml);
    EXPECT_NE(error.find(c.message), std::string::npos) << c.toml << " -> " << error;
  }
  EXPECT_EQ(load_error("[audit]\nfallback_threshold = 1\n"), "");
  EXPECT_EQ(load_error("[engine]\nthreads = 1024\n"), "");
  EXPECT_EQ(load_error("[engine]\nthreads = 0\n"), "");
  EXPECT_EQ(load_error("[audit]\nfallback_threshold = 0\n"), "");
}

TEST(ConfigFile, ErrorsNameFileAndLine) {
  TempToml file("# comment\n[cache]\nttl = 60\ntll = 5\n\n[server]\nbody_limit = \"16QB\"\n");
  std::string error;
  try {
    Config c;
    load_config_file(file.path, c);
  } catch (const ConfigError& e) {
    error = e.what();
  }
  // Every problem, one per line, in line order.
  EXPECT_EQ(error, file.path + ":4: unknown key cache.tll\n" + file.path +
                       ":7: server.body_limit: bad size '16QB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  EXPECT_NE(load_error("[cache\nttl = 5\n").find(":1: "), std::string::npos);  // a TOML syntax error
  EXPECT_NE(load_error("cache = 5\n").find(":1: [cache] must be a table"), std::string::npos);
  EXPECT_NE(load_error("ttl = 5\n").find(":1: unknown key ttl"), std::string::npos);
  Config c;
  EXPECT_THROW(load_config_file("/nonexistent/reprox.toml", c), ConfigError);
}

TEST(ConfigFile, CacheRulesAreReadInOrder) {
  TempToml file(R"([cache]
ttl = 60

[[cache.rule]]
namespace = "faq"
ttl = "24h"
max_ttl = "7d"

[[cache.rule]]
model = "gpt-*"
tenant = "ab*"
route = "/v1/chat/completions"
cache = false
tools = false
)");
  Config c;
  load_config_file(file.path, c);
  ASSERT_EQ(c.rules.size(), 2u);
  const CacheRuleConfig& faq = c.rules[0];
  EXPECT_EQ(faq.model, "*");
  EXPECT_EQ(faq.ns, "faq");
  EXPECT_EQ(faq.tenant, "*");
  EXPECT_EQ(faq.route, "*");
  EXPECT_EQ(faq.ttl_s, 86'400);
  EXPECT_EQ(faq.max_ttl_s, 604'800);
  EXPECT_TRUE(faq.cache);
  EXPECT_TRUE(faq.tools);
  EXPECT_EQ(faq.source, file.path + ":4");
  const CacheRuleConfig& gpt = c.rules[1];
  EXPECT_EQ(gpt.model, "gpt-*");
  EXPECT_EQ(gpt.ns, "*");
  EXPECT_EQ(gpt.tenant, "ab*");
  EXPECT_EQ(gpt.route, "/v1/chat/completions");
  EXPECT_FALSE(gpt.ttl_s.has_value());
  EXPECT_FALSE(gpt.max_ttl_s.has_value());
  EXPECT_FALSE(gpt.cache);
  EXPECT_FALSE(gpt.tools);
  EXPECT_EQ(gpt.source, file.path + ":9");
  EXPECT_EQ(c.cache_ttl, 60);
}

TEST(ConfigFile, BadCacheRulesAreRejected) {
  struct Case {
    const char* toml;
    const char* message;
  };
  const Case cases[] = {
      {"[[cache.rule]]\nmodel = \"x\"\nttll = 5\n",
       ":3: unknown key cache.rule.ttll (rule keys: model, namespace, tenant, route, ttl, max_ttl, cache, tools, near, near_threshold)"},
      {"[[cache.rule]]\nns = \"faq\"\n", ":2: unknown key cache.rule.ns"},
      {"\n[[cache.rule]]\nttl = \"2h\"\nmax_ttl = \"1h\"\n", ":2: cache.rule: ttl 7200 s exceeds max_ttl 3600 s"},
      {"[[cache.rule]]\nttl = \"8d\"\n", ":1: cache.rule: ttl 691200 s exceeds max_ttl 604800 s (the default, 7 days)"},
      {"[[cache.rule]]\nttl = \"5x\"\n", ":2: cache.rule.ttl: bad duration '5x' (units: ms, s, m, h, d)"},
      {"[[cache.rule]]\nmax_ttl = 0\n", ":2: cache.rule.max_ttl must be at least 1 s"},
      {"[[cache.rule]]\ncache = \"no\"\n", ":2: cache.rule.cache must be true or false"},
      {"[[cache.rule]]\nnear = \"maybe\"\n", ":2: cache.rule.near: must be \"off\", \"shadow\" or \"serve\", got \"maybe\""},
      {"[[cache.rule]]\nnear_threshold = 1.5\n", ":2: cache.rule.near_threshold"},
      {"[[cache.rule]]\nmodel = 5\n", ":2: cache.rule.model must be a string"},
      {"[cache.rule]\nmodel = \"x\"\n", ":1: cache.rule must be an array of tables: [[cache.rule]]"},
  };
  for (const Case& c : cases) {
    std::string error = load_error(c.toml);
    EXPECT_NE(error.find(c.message), std::string::npos) << c.toml << " -> " << error;
  }
}

}  // namespace
}  // namespace reprox
