#include "conf/config.hpp"

#include <toml++/toml.h>

#include <functional>
#include <map>
#include <stdexcept>

namespace reprox {

namespace {

// `min` applies to integers: below it is an error.
template <typename T>
std::function<void(const toml::node&)> setter(T& field, const std::string& name, int64_t min = 0) {
  return [&field, name, min](const toml::node& node) {
    if constexpr (std::is_same_v<T, std::string>) {
      auto v = node.value<std::string>();
      if (!v) throw std::runtime_error("config: " + name + " must be a string");
      field = *v;
    } else if constexpr (std::is_same_v<T, bool>) {
      auto v = node.value<bool>();
      if (!v) throw std::runtime_error("config: " + name + " must be true or false");
      field = *v;
    } else {
      auto v = node.value<int64_t>();
      if (!v || *v < min)
        throw std::runtime_error("config: " + name + (min == 0 ? " must be a non-negative integer"
                                                                : " must be an integer >= " + std::to_string(min)));
      field = static_cast<T>(*v);
    }
  };
}

}  // namespace

void load_config_file(const std::string& path, Config& c) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error("config " + path + ": " + std::string(e.description()));
  }
  std::map<std::string, std::function<void(const toml::node&)>> keys = {
      {"server.listen", setter(c.listen, "server.listen")},
      {"server.threads", setter(c.threads, "server.threads")},
      {"server.header_limit", setter(c.header_limit, "server.header_limit")},
      {"server.body_limit", setter(c.body_limit, "server.body_limit")},
      {"server.read_timeout_ms", setter(c.read_timeout_ms, "server.read_timeout_ms")},
      {"server.write_timeout_ms", setter(c.write_timeout_ms, "server.write_timeout_ms")},
      {"server.max_connections", setter(c.max_connections, "server.max_connections")},
      {"server.drain_timeout_ms", setter(c.drain_timeout_ms, "server.drain_timeout_ms")},
      {"proxy.default_seed", setter(c.default_seed, "proxy.default_seed")},
      {"proxy.admin_token", setter(c.admin_token, "proxy.admin_token")},
      {"proxy.shared_cache", setter(c.shared_cache, "proxy.shared_cache")},
      {"cache.bytes", setter(c.cache_bytes, "cache.bytes")},
      {"cache.ttl", setter(c.cache_ttl, "cache.ttl")},
      {"cache.redis", setter(c.redis, "cache.redis")},
      {"redis.connect_timeout_ms", setter(c.redis_connect_timeout_ms, "redis.connect_timeout_ms", 1)},
      {"redis.command_timeout_ms", setter(c.redis_command_timeout_ms, "redis.command_timeout_ms", 1)},
      {"redis.connections", setter(c.redis_connections, "redis.connections", 1)},
      {"redis.io_lookups", setter(c.redis_io_lookups, "redis.io_lookups")},
      {"redis.queue_capacity", setter(c.redis_queue_capacity, "redis.queue_capacity", 1)},
      {"redis.breaker_failures", setter(c.redis_breaker_failures, "redis.breaker_failures", 1)},
      {"redis.breaker_cooldown_ms", setter(c.redis_breaker_cooldown_ms, "redis.breaker_cooldown_ms", 1)},
      {"redis.epoch_poll_ms", setter(c.redis_epoch_poll_ms, "redis.epoch_poll_ms", 1)},
      {"redis.lock_wait_ms", setter(c.redis_lock_wait_ms, "redis.lock_wait_ms")},
      {"redis.stats_interval_ms", setter(c.redis_stats_interval_ms, "redis.stats_interval_ms")},
      {"audit.every", setter(c.audit_every, "audit.every")},
      {"audit.max_in_flight", setter(c.audit_max_in_flight, "audit.max_in_flight", 1)},
      {"engine.model", setter(c.model, "engine.model")},
      {"engine.threads", setter(c.engine_threads, "engine.threads")},
      {"engine.device", setter(c.device, "engine.device")},
      {"engine.numeric_mode", setter(c.numeric_mode, "engine.numeric_mode")},
      {"engine.kv_budget", setter(c.kv_budget, "engine.kv_budget")},
      {"engine.kv_block_size", setter(c.kv_block_size, "engine.kv_block_size")},
      {"engine.kv_conversations_per_user", setter(c.kv_conversations_per_user, "engine.kv_conversations_per_user")},
      {"engine.max_batch_size", setter(c.max_batch_size, "engine.max_batch_size")},
      {"engine.max_step_tokens", setter(c.max_step_tokens, "engine.max_step_tokens")},
      {"engine.prefill_chunk", setter(c.prefill_chunk, "engine.prefill_chunk")},
      {"engine.working_kv", setter(c.working_kv, "engine.working_kv")},
      {"engine.queue", setter(c.engine_queue, "engine.queue")},
      {"engine.default_max_tokens", setter(c.default_max_tokens, "engine.default_max_tokens")},
      {"upstream.url", setter(c.upstream, "upstream.url")},
      {"upstream.api_key", setter(c.upstream_api_key, "upstream.api_key")},
      {"upstream.connect_timeout_ms", setter(c.upstream_connect_timeout_ms, "upstream.connect_timeout_ms")},
      {"upstream.first_byte_timeout_ms", setter(c.upstream_first_byte_timeout_ms, "upstream.first_byte_timeout_ms")},
      {"upstream.idle_timeout_ms", setter(c.upstream_idle_timeout_ms, "upstream.idle_timeout_ms")},
      {"upstream.default_max_tokens", setter(c.upstream_default_max_tokens, "upstream.default_max_tokens")},
  };
  for (const auto& [section, node] : table) {
    const auto* sub = node.as_table();
    if (!sub) throw std::runtime_error("config " + path + ": [" + std::string(section.str()) + "] must be a table");
    for (const auto& [name, value] : *sub) {
      std::string full = std::string(section.str()) + "." + std::string(name.str());
      auto it = keys.find(full);
      if (it == keys.end()) throw std::runtime_error("config " + path + ": unknown key " + full);
      it->second(value);
    }
  }
}

void split_listen(const std::string& listen, std::string& host, unsigned short& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    throw std::runtime_error("--listen must be HOST:PORT, got '" + listen + "'");
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  long p = 0;
  try {
    size_t used = 0;
    p = std::stol(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw std::runtime_error("--listen port must be a number, got '" + listen + "'");
  }
  if (p < 0 || p > 65535) throw std::runtime_error("--listen port out of range: " + listen);
  port = static_cast<unsigned short>(p);
}

}  // namespace reprox
