// Loading the configuration: the TOML file (keys and [[cache.rule]] tables),
// REPROX_* environment overrides, single keys set from flags, and the
// printed form for `reprox config check`. The key table and the value
// readers are in config_keys.cpp.
#include "conf/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "conf/config_keys.hpp"

extern char** environ;

namespace reprox {

namespace {

using config_keys::KeyType;
using config_keys::Kind;
using config_keys::Value;

// The problems found in one source, reported together in line order.
class Problems {
 public:
  void add(int64_t line, std::string message) { list_.push_back({line, std::move(message)}); }
  // Throws one ConfigError, a line per problem, each prefixed by where(line).
  template <typename Where>
  void throw_if_any(const Where& where) {
    if (list_.empty()) return;
    std::stable_sort(list_.begin(), list_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string text;
    for (const auto& [line, message] : list_) text += (text.empty() ? "" : "\n") + where(line) + ": " + message;
    throw ConfigError(text);
  }

 private:
  std::vector<std::pair<int64_t, std::string>> list_;
};

// One key of a [[cache.rule]] table and how it sets the rule.
struct RuleKey {
  const char* name;
  KeyType type;
  void (*set)(CacheRuleConfig&, const Value&);
};

const std::vector<RuleKey>& rule_keys() {
  using R = CacheRuleConfig;
  static const std::vector<RuleKey> keys = {
      {"model", {Kind::text}, [](R& r, const Value& v) { r.model = std::get<std::string>(v); }},
      {"namespace", {Kind::text}, [](R& r, const Value& v) { r.ns = std::get<std::string>(v); }},
      {"tenant", {Kind::text}, [](R& r, const Value& v) { r.tenant = std::get<std::string>(v); }},
      {"route", {Kind::text}, [](R& r, const Value& v) { r.route = std::get<std::string>(v); }},
      {"ttl", {Kind::seconds}, [](R& r, const Value& v) { r.ttl_s = int64_t(std::get<uint64_t>(v)); }},
      {"max_ttl", {Kind::seconds, 1}, [](R& r, const Value& v) { r.max_ttl_s = int64_t(std::get<uint64_t>(v)); }},
      {"cache", {Kind::boolean}, [](R& r, const Value& v) { r.cache = std::get<bool>(v); }},
      {"tools", {Kind::boolean}, [](R& r, const Value& v) { r.tools = std::get<bool>(v); }},
      {"near", {Kind::text},
       [](R& r, const Value& v) {
         const auto& mode = std::get<std::string>(v);
         if (mode != "off" && mode != "shadow" && mode != "serve")
           throw std::invalid_argument("cache.rule.near: must be \"off\", \"shadow\" or \"serve\", got \"" + mode + "\"");
         r.near = mode;
       }},
      {"near_threshold", {Kind::fraction}, [](R& r, const Value& v) { r.near_threshold = std::get<double>(v); }},
  };
  return keys;
}

// The line of a key in the file: the key's own, else its value's.
int64_t line_of(const toml::key& key, const toml::node& value) {
  return key.source().begin.line ? key.source().begin.line : value.source().begin.line;
}

// Reads one TOML file into a Config, collecting every problem.
class FileLoader {
 public:
  FileLoader(const std::string& path, Config& config) : path_(path), config_(config) {}

  void load(const toml::table& root) {
    for (const auto& [name, node] : root) load_top_level(std::string(name.str()), line_of(name, node), node);
    problems_.throw_if_any([this](int64_t line) { return where(line); });
  }

 private:
  std::string where(int64_t line) const { return path_ + ":" + std::to_string(line); }

  void load_top_level(const std::string& name, int64_t line, const toml::node& node) {
    if (const auto* section = node.as_table()) {
      for (const auto& [key, value] : *section) load_key(name, key, value);
    } else if (is_section(name)) {
      problems_.add(line, "[" + name + "] must be a table");
    } else {
      problems_.add(line, "unknown key " + name);
    }
  }

  static bool is_section(const std::string& name) {
    for (const auto& key : config_keys::all_keys())
      if (std::string(key.name).rfind(name + ".", 0) == 0) return true;
    return false;
  }

  void load_key(const std::string& section, const toml::key& key, const toml::node& value) {
    const std::string full = section + "." + std::string(key.str());
    const int64_t line = line_of(key, value);
    if (full == "cache.rule") return load_rules(value, line);
    const auto* spec = config_keys::find_key(full);
    if (!spec) return problems_.add(line, "unknown key " + full);
    try {
      config_keys::store(*spec, config_keys::value_from_node(full, spec->type, value), config_);
      config_.sources[full] = where(line);
    } catch (const std::invalid_argument& e) {
      problems_.add(line, e.what());
    }
  }

  void load_rules(const toml::node& node, int64_t line) {
    const auto* rules = node.as_array();
    if (rules && rules->empty()) return;
    if (!rules || !rules->is_array_of_tables())
      return problems_.add(line, "cache.rule must be an array of tables: [[cache.rule]]");
    for (const auto& rule : *rules) load_rule(*rule.as_table());
  }

  void load_rule(const toml::table& table) {
    const int64_t line = table.source().begin.line;
    CacheRuleConfig rule;
    rule.source = where(line);
    bool ok = true;
    for (const auto& [key, value] : table)
      ok = set_rule_key(rule, std::string(key.str()), line_of(key, value), value) && ok;
    const int64_t max_ttl = rule.max_ttl_s.value_or(kDefaultRuleMaxTtlS);
    if (ok && rule.ttl_s && *rule.ttl_s > max_ttl) {
      problems_.add(line, "cache.rule: ttl " + std::to_string(*rule.ttl_s) + " s exceeds max_ttl " +
                              std::to_string(max_ttl) + " s" + (rule.max_ttl_s ? "" : " (the default, 7 days)"));
      ok = false;
    }
    if (ok) config_.rules.push_back(std::move(rule));
  }

  bool set_rule_key(CacheRuleConfig& rule, const std::string& name, int64_t line, const toml::node& value) {
    for (const RuleKey& key : rule_keys()) {
      if (name != key.name) continue;
      try {
        key.set(rule, config_keys::value_from_node("cache.rule." + name, key.type, value));
        return true;
      } catch (const std::invalid_argument& e) {
        problems_.add(line, e.what());
        return false;
      }
    }
    problems_.add(line, "unknown key cache.rule." + name +
                            " (rule keys: model, namespace, tenant, route, ttl, max_ttl, cache, tools, near, near_threshold)");
    return false;
  }

  const std::string path_;
  Config& config_;
  Problems problems_;
};

toml::table parse_toml(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw ConfigError(path + ": no such file");
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto line = e.source().begin.line;
    throw ConfigError(path + (line ? ":" + std::to_string(line) : "") + ": " + std::string(e.description()));
  }
}

// Parses `text` for `key` and stores it with its provenance; throws
// std::invalid_argument.
void set_from_text(Config& config, const config_keys::KeySpec& key, const std::string& text,
                   const std::string& source) {
  config_keys::store(key, config_keys::value_from_text(key.name, key.type, text), config);
  config.sources[key.name] = source;
}

}  // namespace

void load_config_file(const std::string& path, Config& config) {
  toml::table root = parse_toml(path);
  FileLoader(path, config).load(root);
}

EnvVars reprox_environment() {
  EnvVars env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string item = *entry;
    auto eq = item.find('=');
    if (eq != std::string::npos && item.rfind("REPROX_", 0) == 0) env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return env;
}

std::string env_variable_for(const std::string& key) {
  std::string name = "REPROX_" + key;
  for (char& c : name) c = c == '.' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::vector<std::string> apply_env_overrides(const EnvVars& env, Config& config) {
  std::map<std::string, const config_keys::KeySpec*> by_variable;
  for (const auto& key : config_keys::all_keys()) by_variable[env_variable_for(key.name)] = &key;
  std::vector<std::string> ignored;
  std::vector<std::string> errors;
  for (const auto& [name, text] : env) {
    if (name.rfind("REPROX_", 0) != 0) continue;
    auto it = by_variable.find(name);
    if (it == by_variable.end()) {
      ignored.push_back(name);
      continue;
    }
    try {
      set_from_text(config, *it->second, text, "env " + name);
    } catch (const std::invalid_argument& e) {
      errors.push_back("env " + name + ": " + e.what());
    }
  }
  if (!errors.empty()) {
    std::string text;
    for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e;
    throw ConfigError(text);
  }
  return ignored;
}

void set_config_key(Config& config, const std::string& key, const std::string& text, const std::string& source) {
  const auto* spec = config_keys::find_key(key);
  if (!spec) throw ConfigError(source + ": unknown key " + key);
  try {
    set_from_text(config, *spec, text, source);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source + ": " + e.what());
  }
}

std::string describe_config(const Config& config) {
  constexpr size_t kCommentColumn = 44;
  std::ostringstream out;
  auto line = [&](const std::string& setting, const std::string& source) {
    out << setting << std::string(std::max<size_t>(4, kCommentColumn - std::min(setting.size(), kCommentColumn)), ' ')
        << "# " << source << '\n';
  };
  for (const auto& key : config_keys::all_keys()) {
    auto it = config.sources.find(key.name);
    line(std::string(key.name) + " = " + config_keys::format_value(key, config),
         it == config.sources.end() ? "default" : it->second);
  }
  for (const auto& rule : config.rules) line("cache.rule = " + config_keys::format_rule(rule), rule.source);
  return out.str();
}

namespace {
std::string source_of(const Config& config, const std::string& key) {
  auto it = config.sources.find(key);
  return it == config.sources.end() ? std::string("default") : it->second;
}
}  // namespace

void check_engine_kv_slots(const Config& config) {
  const std::string& slots = config.kv_slots;
  if (slots != "auto" && slots != "on" && slots != "off")
    throw ConfigError(source_of(config, "engine.kv_slots") + ": engine.kv_slots: must be \"auto\", \"on\" or \"off\", got \"" +
                      slots + "\"");
  if (slots == "on" && config.numeric_mode != "fast")
    throw ConfigError(source_of(config, "engine.kv_slots") + ": engine.kv_slots \"on\" needs engine.numeric_mode \"fast\", "
                      "but engine.numeric_mode is \"" + config.numeric_mode + "\" (" +
                      source_of(config, "engine.numeric_mode") + ")");
}

std::string resolve_engine_dtype(const Config& config) {
  const std::string& dtype = config.dtype;
  const bool fast = config.numeric_mode == "fast";
  if (dtype == "auto") return fast && config.device.rfind("cuda", 0) == 0 ? "bfloat16" : "float32";
  if (dtype != "float32" && dtype != "bfloat16" && dtype != "float16")
    throw ConfigError(source_of(config, "engine.dtype") + ": engine.dtype: must be \"auto\", \"float32\", \"bfloat16\" or "
                      "\"float16\", got \"" + dtype + "\"");
  if (dtype != "float32" && !fast)
    throw ConfigError(source_of(config, "engine.dtype") + ": engine.dtype \"" + dtype + "\" needs engine.numeric_mode \"fast\", "
                      "but engine.numeric_mode is \"" + config.numeric_mode + "\" (" + source_of(config, "engine.numeric_mode") +
                      "); strict mode computes in float32 only");
  return dtype;
}

namespace {
// "scheme://host[:port]", with the scheme http or https and a port of
// digits; anything after the authority (a path, "/", "?", "#") is not an
// origin.
bool is_origin(const std::string& s) {
  size_t rest = 0;
  if (s.rfind("http://", 0) == 0) rest = 7;
  else if (s.rfind("https://", 0) == 0) rest = 8;
  else return false;
  std::string_view authority(s.data() + rest, s.size() - rest);
  if (authority.empty() || authority.find_first_of("/?#@ \t") != std::string_view::npos) return false;
  const size_t colon = authority.rfind(':');
  const size_t bracket = authority.rfind(']');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) return true;
  std::string_view port = authority.substr(colon + 1);
  if (colon == 0 || port.empty() || port.size() > 5) return false;
  for (char c : port)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

std::vector<std::string> cors_origins(const Config& config) {
  std::vector<std::string> out;
  const std::string& text = config.cors_origins;
  auto fail = [&config](const std::string& why) {
    throw ConfigError(source_of(config, "server.cors_origins") + ": server.cors_origins: " + why);
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    std::transform(item.begin(), item.end(), item.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (!item.empty()) {
      if (item != "*" && !is_origin(item))
        fail("\"" + item + "\" is not an origin: give \"*\" or origins such as \"https://app.example.com\" "
             "(scheme, host and port; no path, no trailing slash), separated by commas");
      out.push_back(std::move(item));
    }
    start = comma + 1;
  }
  if (out.size() > 1 && std::find(out.begin(), out.end(), "*") != out.end())
    fail("\"*\" allows every origin; give it alone");
  return out;
}

void split_listen(const std::string& listen, std::string& host, unsigned short& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    throw std::runtime_error("a listen address must be HOST:PORT, got '" + listen + "'");
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  long p = 0;
  try {
    size_t used = 0;
    p = std::stol(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw std::runtime_error("a listen port must be a number, got '" + listen + "'");
  }
  if (p < 0 || p > 65535) throw std::runtime_error("a listen port is out of range: " + listen);
  port = static_cast<unsigned short>(p);
}

}  // namespace reprox
