// The layers over the defaults: the file, then REPROX_<SECTION>_<KEY>
// environment variables, then flags (set_config_key). Each later layer wins,
// its values parse like the file's, its errors name their source, and the
// provenance of every key says which layer set it.
#include <gtest/gtest.h>

#include <string>

#include "conf/config.hpp"
#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

std::string source_of(const Config& c, const std::string& key) {
  auto it = c.sources.find(key);
  return it == c.sources.end() ? "default" : it->second;
}

std::string env_error(const EnvVars& env) {
  Config c;
  try {
    apply_env_overrides(env, c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigEnv, VariableNames) {
  EXPECT_EQ(env_variable_for("cache.ttl"), "REPROX_CACHE_TTL");
  EXPECT_EQ(env_variable_for("server.listen"), "REPROX_SERVER_LISTEN");
  EXPECT_EQ(env_variable_for("log.audit"), "REPROX_LOG_AUDIT");
  EXPECT_EQ(env_variable_for("engine.kv_conversations_per_user"), "REPROX_ENGINE_KV_CONVERSATIONS_PER_USER");
}

TEST(ConfigEnv, OverridesTheFile) {
  TempToml file("[cache]\nttl = 60\nbytes = \"1MiB\"\n[server]\nlisten = \"0.0.0.0:80\"\n");
  Config c;
  load_config_file(file.path, c);
  apply_env_overrides({{"REPROX_CACHE_TTL", "24h"},
                       {"REPROX_SERVER_LISTEN", "127.0.0.1:9000"},
                       {"REPROX_LOG_AUDIT", "/var/log/reprox/audit.jsonl"},
                       {"REPROX_LOG_ACCESS", "1"},
                       {"REPROX_CACHE_STORE_TRUNCATED", "false"},
                       {"REPROX_AUDIT_FALLBACK_THRESHOLD", "0.5"},
                       {"REPROX_SERVER_READ_TIMEOUT_MS", "5s"},
                       {"REPROX_ENGINE_THREADS", "3"}},
                      c);
  EXPECT_EQ(c.cache_ttl, 86'400);
  EXPECT_EQ(c.cache_bytes, 1u << 20);  // from the file: no variable
  EXPECT_EQ(c.listen, "127.0.0.1:9000");
  EXPECT_EQ(c.audit_log, "/var/log/reprox/audit.jsonl");
  EXPECT_TRUE(c.access_log);
  EXPECT_FALSE(c.store_truncated);
  EXPECT_DOUBLE_EQ(c.fallback_threshold, 0.5);
  EXPECT_EQ(c.read_timeout_ms, 5'000);
  EXPECT_EQ(c.engine_threads, 3);
}

TEST(ConfigEnv, UnknownVariablesAreIgnoredAndListed) {
  Config c;
  auto ignored = apply_env_overrides({{"REPROX_CACHE_TLL", "5"}, {"REPROX_NPM_DIR", "/x"}, {"HOME", "/root"}}, c);
  EXPECT_EQ(ignored, (std::vector<std::string>{"REPROX_CACHE_TLL", "REPROX_NPM_DIR"}));
  EXPECT_EQ(c.cache_ttl, Config{}.cache_ttl);
}

TEST(ConfigEnv, BadValuesNameTheVariable) {
  struct Case {
    EnvVars env;
    const char* message;
  };
  const Case cases[] = {
      {{{"REPROX_CACHE_TTL", "24x"}}, "env REPROX_CACHE_TTL: cache.ttl: bad duration '24x' (units: ms, s, m, h, d)"},
      {{{"REPROX_CACHE_BYTES", "16QB"}},
       "env REPROX_CACHE_BYTES: cache.bytes: bad size '16QB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"},
      {{{"REPROX_LOG_ACCESS", "yes"}}, "env REPROX_LOG_ACCESS: log.access: bad boolean 'yes' (true, false, 1 or 0)"},
      {{{"REPROX_SERVER_THREADS", "two"}}, "env REPROX_SERVER_THREADS: server.threads: bad integer 'two'"},
      {{{"REPROX_SERVER_THREADS", "-2"}}, "env REPROX_SERVER_THREADS: server.threads must be a non-negative integer"},
      {{{"REPROX_REDIS_CONNECTIONS", "0"}}, "env REPROX_REDIS_CONNECTIONS: redis.connections must be an integer >= 1"},
      {{{"REPROX_AUDIT_FALLBACK_THRESHOLD", "2"}},
       "env REPROX_AUDIT_FALLBACK_THRESHOLD: audit.fallback_threshold must be a number between 0 and 1"},
      {{{"REPROX_AUDIT_FALLBACK_THRESHOLD", "0.1x"}},
       "env REPROX_AUDIT_FALLBACK_THRESHOLD: audit.fallback_threshold: bad number '0.1x'"},
  };
  for (const Case& c : cases) EXPECT_EQ(env_error(c.env), c.message);
}

TEST(ConfigFlags, SetKeysWithTheirSource) {
  Config c;
  set_config_key(c, "cache.bytes", "2GiB", "flag --cache-bytes");
  set_config_key(c, "cache.hot_window", "1h30m", "flag --hot-window");
  set_config_key(c, "proxy.default_seed", "18446744073709551615", "flag --default-seed");
  EXPECT_EQ(c.cache_bytes, 2ull << 30);
  EXPECT_EQ(c.hot_window, 5'400);
  EXPECT_EQ(c.default_seed, 18446744073709551615ull);
  EXPECT_EQ(source_of(c, "cache.bytes"), "flag --cache-bytes");
  try {
    set_config_key(c, "cache.ttl", "1y", "flag --cache-ttl");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "flag --cache-ttl: cache.ttl: bad duration '1y' (units: ms, s, m, h, d)");
  }
  EXPECT_THROW(set_config_key(c, "engine.max_batch_size", "99999999999", "flag --max-batch-size"), ConfigError);
}

// defaults < file < environment < flags, and each key says which won.
TEST(ConfigProvenance, EachLayerRecordsItsSource) {
  TempToml file("[cache]\nttl = 60\nbytes = 1024\nhot_hits = 3\n");
  Config c;
  load_config_file(file.path, c);
  apply_env_overrides({{"REPROX_CACHE_TTL", "2h"}, {"REPROX_CACHE_BYTES", "2KiB"}}, c);
  set_config_key(c, "cache.bytes", "4KiB", "flag --cache-bytes");
  EXPECT_EQ(c.hot_window, 3600);
  EXPECT_EQ(source_of(c, "cache.hot_window"), "default");
  EXPECT_EQ(c.hot_hits, 3);
  EXPECT_EQ(source_of(c, "cache.hot_hits"), file.path + ":4");
  EXPECT_EQ(c.cache_ttl, 7'200);
  EXPECT_EQ(source_of(c, "cache.ttl"), "env REPROX_CACHE_TTL");
  EXPECT_EQ(c.cache_bytes, 4096u);
  EXPECT_EQ(source_of(c, "cache.bytes"), "flag --cache-bytes");
}

TEST(ConfigProvenance, DescribeListsValuesSourcesAndRules) {
  TempToml file(
      "[proxy]\nadmin_token = \"s3cret\"\n[cache]\nredis = \"redis://u:pw@h:6379/1\"\n"
      "[[cache.rule]]\nnamespace = \"faq\"\nttl = \"24h\"\n");
  Config c;
  load_config_file(file.path, c);
  apply_env_overrides({{"REPROX_CACHE_TTL", "90s"}}, c);
  const std::string text = describe_config(c);
  auto has_line = [&](const std::string& setting, const std::string& source) {
    const auto at = text.find(setting + " ");
    if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return false;
    const auto end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    return line.size() >= source.size() + 2 &&
           line.compare(line.size() - source.size() - 2, std::string::npos, "# " + source) == 0;
  };
  EXPECT_TRUE(has_line("cache.ttl = 90", "env REPROX_CACHE_TTL")) << text;
  EXPECT_TRUE(has_line("cache.hot_window = 3600", "default")) << text;
  EXPECT_TRUE(has_line("server.listen = \"127.0.0.1:8080\"", "default")) << text;
  EXPECT_TRUE(has_line("audit.fallback_threshold = 0.05", "default")) << text;
  EXPECT_TRUE(has_line("proxy.admin_token = \"***\"", file.path + ":2")) << text;
  EXPECT_TRUE(has_line("cache.redis = \"redis://u:***@h:6379/1\"", file.path + ":4")) << text;
  EXPECT_TRUE(
      has_line("cache.rule = { model = \"*\", namespace = \"faq\", tenant = \"*\", route = \"*\", "
               "ttl = 86400, cache = true, tools = true, near = \"off\", near_threshold = 0.95 }",
               file.path + ":5"))
      << text;
  EXPECT_EQ(text.find("s3cret"), std::string::npos);
}

}  // namespace
}  // namespace reprox
