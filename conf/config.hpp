// reprox's settings: defaults, then the TOML file, then REPROX_* environment
// variables, then command-line flags. Loaded once at start-up; every error
// (ConfigError) names where the bad value came from and the key. Sizes and
// durations may carry units (conf/units.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reprox {

// One [[cache.rule]]: the first rule whose four globs all match a request
// decides its TTL and whether it is cached. Globs are fnmatch patterns;
// "*" matches anything (an absent namespace or tenant is "").
// A rule's max_ttl when it sets none: 7 days.
constexpr int64_t kDefaultRuleMaxTtlS = 7 * 24 * 3600;

struct CacheRuleConfig {
  std::string model = "*";   // the resolved model id
  std::string ns = "*";      // the request's cache namespace
  std::string tenant = "*";  // hex SHA-256 of the bearer token ("" with shared_cache)
  std::string route = "*";   // the request path, e.g. /v1/chat/completions
  std::optional<int64_t> ttl_s;      // unset: [cache] ttl
  std::optional<int64_t> max_ttl_s;  // unset: 7 days; requests and hot-key steps never go past it
  bool cache = true;                 // false: matching requests bypass the cache
  bool tools = true;                 // false: requests that carry tools are not stored
  std::string near = "off";          // near-duplicate matching: "off", "shadow" or "serve"
  double near_threshold = 0.95;      // cosine similarity of the last user messages
  std::string source;                // "FILE:LINE" of the rule, for explain and config check
};

struct Config {
  // [server]
  std::string listen = "127.0.0.1:8080";
  int threads = 2;
  uint64_t header_limit = 8 * 1024;
  uint64_t body_limit = 1024 * 1024;
  int64_t read_timeout_ms = 30000;
  int64_t write_timeout_ms = 30000;
  uint64_t max_connections = 10000;
  int64_t drain_timeout_ms = 30000;
  std::string cors_origins;  // browser origins that may call the API: "*" or a comma list; empty: none
  // [proxy]
  uint64_t default_seed = 42;
  std::string admin_token;
  bool shared_cache = false;  // one cache across bearer tokens
  // [cache]
  uint64_t cache_bytes = 256ull << 20;
  int64_t cache_ttl = 3600;
  std::string redis;  // redis://... or unix://...; empty: memory only
  int64_t hot_hits = 20;        // hits within hot_window that extend an entry's TTL; 0: off
  int64_t hot_window = 3600;    // seconds
  bool store_truncated = true;  // store finish_reason "length" answers
  uint64_t near_index_bytes = 16ull << 20;  // the in-memory near-duplicate index (without Redis)
  std::vector<CacheRuleConfig> rules;  // [[cache.rule]], in file order
  // [redis]: the Redis tier's tuning (used only when cache.redis is set; the
  // URL's connect_timeout_ms / command_timeout_ms parameters override these)
  int64_t redis_connect_timeout_ms = 100;
  int64_t redis_command_timeout_ms = 50;  // also the longest a lookup waits
  int64_t redis_connections = 4;          // connections = worker threads
  bool redis_io_lookups = true;           // lookups on each I/O thread's own connection
  int64_t redis_queue_capacity = 256;     // queued commands per connection
  int64_t redis_breaker_failures = 5;     // consecutive failures that open the breaker
  int64_t redis_breaker_cooldown_ms = 250;
  int64_t redis_epoch_poll_ms = 100;      // idle poll of epoch:seq (drops L1 after a purge elsewhere)
  int64_t redis_lock_wait_ms = 5000;      // cross-instance single-flight: longest wait for another instance
  int64_t redis_stats_interval_ms = 10000;  // entry/byte count of the Redis tier (background SCAN)
  // [audit]: reproducibility audits of cache hits
  int64_t audit_every = 0;          // re-generate one hit in this many and compare; 0: off
  int64_t audit_max_in_flight = 1;  // audits generating at once (others are skipped)
  bool fallback = true;              // greedy fallback when audits mismatch too often
  int64_t fallback_window = 200;     // the last N audits per model
  double fallback_threshold = 0.05;  // mismatch rate over a full window that engages it
  // [log]
  std::string audit_log;             // JSON lines, one per chat request; empty: off
  bool audit_prompts = false;        // include the messages in the audit log
  bool access_log = false;           // one line per request on stderr
  int64_t audit_queue = 8192;        // lines waiting for the writer; beyond, dropped and counted
  // [engine]
  std::string model;  // empty: the embedded tiny model
  int engine_threads = 0;  // 0: every core
  std::string device = "cpu";
  std::string numeric_mode = "strict";  // strict: row/batch-invariant kernels; fast: libtorch
  std::string weights = "auto";         // strict weight storage: auto | f32 | f16 | bf16 | q8
  std::string dtype = "auto";           // compute dtype: auto | float32 | bfloat16 | float16 (resolve_engine_dtype)
  uint64_t kv_budget = 512ull << 20;
  int kv_block_size = 16;                  // tokens per KV block
  int kv_conversations_per_user = 10;      // conversations one tenant keeps in the reuse cache
  int max_batch_size = 16;                 // sequences per model pass (continuous batching)
  int64_t max_step_tokens = 512;           // tokens per model pass (prefill chunks + decodes)
  int64_t prefill_chunk = 256;             // most prompt tokens of one sequence per pass
  uint64_t working_kv = 1ull << 30;        // KV bytes of running sequences before preemption
  std::string kv_slots = "auto";           // fast mode: running KV in slots: auto (on a GPU) | on | off
  bool cuda_graphs = true;                 // with KV slots: fixed-shape decode steps, as CUDA graphs on a GPU
  int64_t engine_queue = 64;               // requests queued for the engine before 429
  double tenant_queue_share = 1.0;         // the most of the engine queue one API key may hold
  int64_t default_max_tokens = 256;
  // [tenant]: per API key (tenant) limits on chat requests; 0 is off
  int64_t tenant_max_concurrent = 0;       // chat requests in progress at once
  int64_t tenant_rate = 0;                 // requests per second (token bucket)
  int64_t tenant_burst = 0;                // the bucket's size; 0: the rate
  // [auth]
  std::string auth_keys_file;  // allowed client keys as SHA-256 hex lines; empty: every client allowed
  // [admin]
  std::string admin_listen;  // HOST:PORT for /metrics and the admin endpoints; empty: on the API listener
  // [upstream]
  std::string upstream;  // empty: generate with the engine
  std::string upstream_api_key;
  int64_t upstream_connect_timeout_ms = 5000;
  int64_t upstream_first_byte_timeout_ms = 60000;
  int64_t upstream_idle_timeout_ms = 60000;
  int64_t upstream_default_max_tokens = 4096;

  // Provenance, by "section.key": where the effective value came from,
  // "FILE:LINE", "env REPROX_SECTION_KEY" or "flag --name". A key not
  // listed has its default.
  std::map<std::string, std::string> sources;
};

// A bad file, key or value. what() holds one line per problem, each starting
// with where it is: "FILE:LINE: ", "env REPROX_CACHE_TTL: " or "flag --cache-ttl: ".
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Environment variables by name.
using EnvVars = std::map<std::string, std::string>;

// Applies the TOML file at `path` over `config` and records each key's
// "FILE:LINE". Unknown keys are an error, so a typo never silently falls
// back to a default. Reports every problem in the file at once.
void load_config_file(const std::string& path, Config& config);

// The process's environment variables whose names start with REPROX_.
EnvVars reprox_environment();

// The variable that overrides `key`: "cache.ttl" -> "REPROX_CACHE_TTL".
std::string env_variable_for(const std::string& key);

// Applies each REPROX_<SECTION>_<KEY> variable in `env` over `config`, parsed
// as set_config_key() does. Returns the REPROX_* names that name no key
// (ignored). Variables without the prefix are skipped.
std::vector<std::string> apply_env_overrides(const EnvVars& env, Config& config);

// Sets `key` ("section.key") from `text` as a flag or a variable gives it:
// strings as given, booleans true/false/1/0, integers, sizes and durations
// with units. Records `source` ("flag --cache-ttl") as the key's provenance;
// errors start with it.
void set_config_key(Config& config, const std::string& key, const std::string& text, const std::string& source);

// The effective configuration, one key per line, `section.key = value    #
// source`, then one line per [[cache.rule]] with its FILE:LINE. Secrets
// (proxy.admin_token, upstream.api_key, a password in cache.redis) are masked.
std::string describe_config(const Config& config);

// engine.dtype as the engine computes: "auto" is "bfloat16" on a CUDA device
// (engine.device "cuda" or "cuda:N") with engine.numeric_mode "fast", and
// "float32" otherwise; "float32", "bfloat16" and "float16" stay as given.
// Throws ConfigError, starting with where engine.dtype came from, for any
// other value, and for a 16-bit dtype with numeric_mode "strict" (strict
// mode computes in float32 only), naming both keys and their sources.
std::string resolve_engine_dtype(const Config& config);

// Throws ConfigError, starting with where engine.kv_slots came from, unless
// it is "auto", "on" or "off", and for "on" with numeric_mode "strict"
// (slots are fast mode's), naming both keys and their sources.
void check_engine_kv_slots(const Config& config);

// server.cors_origins as a list: empty (off), {"*"} (any origin), or
// origins "scheme://host[:port]" in lower case (how browsers send Origin).
// Throws ConfigError, starting with where the key came from, for an entry
// that is not an http(s) origin (a path, a trailing slash, no host) or for
// "*" beside other entries.
std::vector<std::string> cors_origins(const Config& config);

// Splits "HOST:PORT" ("[v6]:PORT" too); throws on a malformed value.
void split_listen(const std::string& listen, std::string& host, unsigned short& port);

}  // namespace reprox
