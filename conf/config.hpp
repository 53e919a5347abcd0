// reprox's settings: defaults, then the TOML file, then command-line flags.
// Loaded once at start-up; exceptions (std::runtime_error) name the bad key.
#pragma once

#include <cstdint>
#include <string>

namespace reprox {

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
  // [proxy]
  uint64_t default_seed = 42;
  std::string admin_token;
  bool shared_cache = false;  // one cache across bearer tokens
  // [cache]
  uint64_t cache_bytes = 256ull << 20;
  int64_t cache_ttl = 3600;
  std::string redis;  // redis://... or unix://...; empty: memory only
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
  // [engine]
  std::string model;  // empty: the embedded tiny model
  int engine_threads = 1;
  std::string device = "cpu";
  std::string numeric_mode = "strict";  // strict: row/batch-invariant kernels; fast: libtorch
  uint64_t kv_budget = 512ull << 20;
  int kv_block_size = 16;                  // tokens per KV block
  int kv_conversations_per_user = 10;      // conversations one tenant keeps in the reuse cache
  int max_batch_size = 16;                 // sequences per model pass (continuous batching)
  int64_t max_step_tokens = 512;           // tokens per model pass (prefill chunks + decodes)
  int64_t prefill_chunk = 256;             // most prompt tokens of one sequence per pass
  uint64_t working_kv = 1ull << 30;        // KV bytes of running sequences before preemption
  int64_t engine_queue = 64;               // requests queued for the engine before 429
  int64_t default_max_tokens = 256;
  // [upstream]
  std::string upstream;  // empty: generate with the engine
  std::string upstream_api_key;
  int64_t upstream_connect_timeout_ms = 5000;
  int64_t upstream_first_byte_timeout_ms = 60000;
  int64_t upstream_idle_timeout_ms = 60000;
  int64_t upstream_default_max_tokens = 4096;
};

// Applies the TOML file at `path` over `config`. Unknown keys are an error,
// so a typo never silently falls back to a default.
void load_config_file(const std::string& path, Config& config);

// Splits "HOST:PORT" ("[v6]:PORT" too); throws on a malformed value.
void split_listen(const std::string& listen, std::string& host, unsigned short& port);

}  // namespace reprox
