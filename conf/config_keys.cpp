// The key table, the value readers and the printed form of the effective
// configuration; see config_keys.hpp and describe_config() in config.hpp.
#include "conf/config_keys.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "conf/units.hpp"

namespace reprox::config_keys {

namespace {

using std::invalid_argument;

constexpr KeyType kText{Kind::text}, kBool{Kind::boolean}, kInt{Kind::integer}, kPositive{Kind::integer, 1};
// Threads a key may ask for: 0 means a default (one I/O thread, every core
// for the engine); past this, start-up would stall creating them.
constexpr uint64_t kMostThreads = 1024;
constexpr KeyType kThreads{Kind::integer, 0, kMostThreads}, kPositiveThreads{Kind::integer, 1, kMostThreads};
constexpr KeyType kSize{Kind::size}, kSeconds{Kind::seconds}, kMs{Kind::milliseconds},
    kPositiveMs{Kind::milliseconds, 1};
constexpr KeyType kFraction{Kind::fraction};

std::vector<KeySpec> make_table() {
  using C = Config;
  return {
      {"server.listen", kText, &C::listen},
      {"server.threads", kThreads, &C::threads},
      {"server.header_limit", kSize, &C::header_limit},
      {"server.body_limit", kSize, &C::body_limit},
      {"server.read_timeout_ms", kMs, &C::read_timeout_ms},
      {"server.write_timeout_ms", kMs, &C::write_timeout_ms},
      {"server.max_connections", kPositive, &C::max_connections},
      {"server.drain_timeout_ms", kMs, &C::drain_timeout_ms},
      {"server.cors_origins", kText, &C::cors_origins},
      {"proxy.default_seed", kInt, &C::default_seed},
      {"proxy.admin_token", kText, &C::admin_token, true},
      {"proxy.shared_cache", kBool, &C::shared_cache},
      {"cache.bytes", kSize, &C::cache_bytes},
      {"cache.ttl", kSeconds, &C::cache_ttl},
      {"cache.redis", kText, &C::redis, true},
      {"cache.hot_hits", kInt, &C::hot_hits},
      {"cache.hot_window", kSeconds, &C::hot_window},
      {"cache.store_truncated", kBool, &C::store_truncated},
      {"cache.near_index_bytes", kSize, &C::near_index_bytes},
      {"redis.connect_timeout_ms", kPositiveMs, &C::redis_connect_timeout_ms},
      {"redis.command_timeout_ms", kPositiveMs, &C::redis_command_timeout_ms},
      {"redis.connections", kPositiveThreads, &C::redis_connections},
      {"redis.io_lookups", kBool, &C::redis_io_lookups},
      {"redis.queue_capacity", kPositive, &C::redis_queue_capacity},
      {"redis.breaker_failures", kPositive, &C::redis_breaker_failures},
      {"redis.breaker_cooldown_ms", kPositiveMs, &C::redis_breaker_cooldown_ms},
      {"redis.epoch_poll_ms", kPositiveMs, &C::redis_epoch_poll_ms},
      {"redis.lock_wait_ms", kMs, &C::redis_lock_wait_ms},
      {"redis.stats_interval_ms", kMs, &C::redis_stats_interval_ms},
      {"audit.every", kInt, &C::audit_every},
      {"audit.max_in_flight", kPositive, &C::audit_max_in_flight},
      {"audit.fallback", kBool, &C::fallback},
      {"audit.fallback_window", kPositive, &C::fallback_window},
      {"audit.fallback_threshold", kFraction, &C::fallback_threshold},
      {"log.audit", kText, &C::audit_log},
      {"log.audit_prompts", kBool, &C::audit_prompts},
      {"log.access", kBool, &C::access_log},
      {"log.queue", kPositive, &C::audit_queue},
      {"engine.model", kText, &C::model},
      {"engine.threads", kThreads, &C::engine_threads},
      {"engine.device", kText, &C::device},
      {"engine.numeric_mode", kText, &C::numeric_mode},
      {"engine.weights", kText, &C::weights},
      {"engine.dtype", kText, &C::dtype},
      {"engine.kv_budget", kSize, &C::kv_budget},
      {"engine.kv_block_size", kPositive, &C::kv_block_size},
      {"engine.kv_conversations_per_user", kPositive, &C::kv_conversations_per_user},
      {"engine.max_batch_size", kPositive, &C::max_batch_size},
      {"engine.max_step_tokens", kPositive, &C::max_step_tokens},
      {"engine.prefill_chunk", kPositive, &C::prefill_chunk},
      {"engine.working_kv", kSize, &C::working_kv},
      {"engine.kv_slots", kText, &C::kv_slots},
      {"engine.cuda_graphs", kBool, &C::cuda_graphs},
      {"engine.queue", kPositive, &C::engine_queue},
      {"engine.default_max_tokens", kPositive, &C::default_max_tokens},
      {"engine.tenant_queue_share", kFraction, &C::tenant_queue_share},
      {"auth.keys_file", kText, &C::auth_keys_file},
      {"admin.listen", kText, &C::admin_listen},
      {"tenant.max_concurrent", kInt, &C::tenant_max_concurrent},
      {"tenant.requests_per_second", kInt, &C::tenant_rate},
      {"tenant.burst", kInt, &C::tenant_burst},
      {"upstream.url", kText, &C::upstream},
      {"upstream.api_key", kText, &C::upstream_api_key, true},
      {"upstream.connect_timeout_ms", kMs, &C::upstream_connect_timeout_ms},
      {"upstream.first_byte_timeout_ms", kMs, &C::upstream_first_byte_timeout_ms},
      {"upstream.idle_timeout_ms", kMs, &C::upstream_idle_timeout_ms},
      {"upstream.default_max_tokens", kPositive, &C::upstream_default_max_tokens},
  };
}

// "must be ..." for a number under the key's least value.
std::string below_min(const std::string& name, KeyType type, bool negative) {
  if (negative || type.min == 0) return name + " must be a non-negative integer";
  std::string min = std::to_string(type.min);
  switch (type.kind) {
    case Kind::seconds:
      return name + " must be at least " + min + " s";
    case Kind::milliseconds:
      return name + " must be at least " + min + " ms";
    case Kind::size:
      return name + " must be at least " + min + " bytes";
    default:
      return name + " must be an integer >= " + min;
  }
}

uint64_t checked_number(const std::string& name, KeyType type, int64_t value) {
  if (value < 0 || uint64_t(value) < type.min) throw invalid_argument(below_min(name, type, value < 0));
  return uint64_t(value);
}

double checked_fraction(const std::string& name, double value) {
  if (!(value >= 0.0 && value <= 1.0)) throw invalid_argument(name + " must be a number between 0 and 1");
  return value;
}

// What a size or duration key accepts, for a value of the wrong type.
std::string unit_requirement(Kind kind) {
  if (kind == Kind::size) return "a size: an integer (bytes) or a string such as \"512MiB\"";
  if (kind == Kind::seconds) return "a duration: an integer (seconds) or a string such as \"24h\"";
  return "a duration: an integer (milliseconds) or a string such as \"30s\"";
}

bool parse_bool_text(const std::string& name, const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (t == "true" || t == "1") return true;
  if (t == "false" || t == "0") return false;
  throw invalid_argument(name + ": bad boolean '" + text + "' (true, false, 1 or 0)");
}

uint64_t parse_integer_text(const std::string& name, KeyType type, const std::string& text) {
  if (!text.empty() && text.front() == '-') throw invalid_argument(below_min(name, type, true));
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) throw invalid_argument(name + ": integer '" + text + "' is too large");
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw invalid_argument(name + ": bad integer '" + text + "'");
  if (value < type.min) throw invalid_argument(below_min(name, type, false));
  return value;
}

// Sizes and durations: the units parser's message after the key's name.
uint64_t parse_unit_text(const std::string& name, KeyType type, const std::string& text) {
  uint64_t value = 0;
  try {
    if (type.kind == Kind::size)
      value = parse_size(text);
    else
      value = uint64_t(parse_duration(text, type.kind == Kind::seconds ? TimeUnit::seconds : TimeUnit::milliseconds));
  } catch (const invalid_argument& e) {
    throw invalid_argument(name + ": " + e.what());
  }
  if (value < type.min) throw invalid_argument(below_min(name, type, false));
  return value;
}

double parse_fraction_text(const std::string& name, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) throw invalid_argument(name + ": bad number '" + text + "'");
  return checked_fraction(name, value);
}

// A TOML basic string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// "redis://user:secret@host" -> "redis://user:***@host"; others unchanged.
std::string mask_url_password(const std::string& url) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  auto at = url.find('@', scheme + 3);
  auto colon = url.find(':', scheme + 3);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return url;
  if (url.find('/', scheme + 3) < at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

std::string masked(const KeySpec& key, const std::string& value) {
  if (!key.secret || value.empty()) return value;
  return std::string(key.name) == "cache.redis" ? mask_url_password(value) : "***";
}

// The shortest decimal that reads back as `v`, with a point or an exponent.
std::string format_double(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

const std::vector<KeySpec>& all_keys() {
  static const std::vector<KeySpec> table = make_table();
  return table;
}

const KeySpec* find_key(std::string_view name) {
  for (const KeySpec& key : all_keys())
    if (name == key.name) return &key;
  return nullptr;
}

Value value_from_node(const std::string& name, KeyType type, const toml::node& node) {
  switch (type.kind) {
    case Kind::text:
      if (auto s = node.as_string()) return s->get();
      throw invalid_argument(name + " must be a string");
    case Kind::boolean:
      if (auto b = node.as_boolean()) return b->get();
      throw invalid_argument(name + " must be true or false");
    case Kind::integer:
      if (auto i = node.as_integer()) return checked_number(name, type, i->get());
      throw invalid_argument(below_min(name, type, false));
    case Kind::size:
    case Kind::seconds:
    case Kind::milliseconds:
      if (auto i = node.as_integer()) return checked_number(name, type, i->get());
      if (auto s = node.as_string()) return parse_unit_text(name, type, s->get());
      throw invalid_argument(name + " must be " + unit_requirement(type.kind));
    case Kind::fraction:
      if (auto f = node.as_floating_point()) return checked_fraction(name, f->get());
      if (auto i = node.as_integer()) return checked_fraction(name, double(i->get()));
      throw invalid_argument(name + " must be a number between 0 and 1");
  }
  throw std::logic_error("config: unhandled key kind");
}

Value value_from_text(const std::string& name, KeyType type, const std::string& text) {
  switch (type.kind) {
    case Kind::text:
      return text;
    case Kind::boolean:
      return parse_bool_text(name, text);
    case Kind::integer:
      return parse_integer_text(name, type, text);
    case Kind::size:
    case Kind::seconds:
    case Kind::milliseconds:
      return parse_unit_text(name, type, text);
    case Kind::fraction:
      return parse_fraction_text(name, text);
  }
  throw std::logic_error("config: unhandled key kind");
}

void store(const KeySpec& key, const Value& value, Config& config) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(config.*member)>;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_same_v<T, double>) {
          config.*member = std::get<T>(value);
        } else {
          uint64_t v = std::get<uint64_t>(value);
          const uint64_t max = std::min(key.type.max, uint64_t(std::numeric_limits<T>::max()));
          if (v > max) throw invalid_argument(std::string(key.name) + " must be at most " + std::to_string(max));
          config.*member = static_cast<T>(v);
        }
      },
      key.member);
}

std::string format_value(const KeySpec& key, const Config& config) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& v = config.*member;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          return quoted(masked(key, v));
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>)
          return format_double(v);
        else
          return std::to_string(v);
      },
      key.member);
}

std::string format_rule(const CacheRuleConfig& rule) {
  std::ostringstream out;
  out << "{ model = " << quoted(rule.model) << ", namespace = " << quoted(rule.ns)
      << ", tenant = " << quoted(rule.tenant) << ", route = " << quoted(rule.route);
  if (rule.ttl_s) out << ", ttl = " << *rule.ttl_s;
  if (rule.max_ttl_s) out << ", max_ttl = " << *rule.max_ttl_s;
  out << ", cache = " << (rule.cache ? "true" : "false") << ", tools = " << (rule.tools ? "true" : "false")
      << ", near = " << quoted(rule.near) << ", near_threshold = " << rule.near_threshold << " }";
  return out.str();
}

}  // namespace reprox::config_keys
