// The table of configuration keys, internal to conf/: each key's name, what
// it accepts and the Config member it sets, and how one value is read from a
// TOML node (the file) or from text (an environment variable or a flag).
// Value readers throw std::invalid_argument whose message starts with the
// key's name; callers prefix where the value came from.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "conf/config.hpp"

namespace reprox::config_keys {

enum class Kind {
  text,          // a string
  boolean,       // true/false (text: also 1/0)
  integer,       // a whole number
  size,          // bytes: an integer or "16GiB"
  seconds,       // an integer in seconds or "1h30m"
  milliseconds,  // an integer in milliseconds or "30s"
  fraction,      // a number in [0, 1]
};

// What a key accepts. Numbers below `min` are errors (no key takes a
// negative number), and so are numbers above `max` or above what the key's
// member holds.
struct KeyType {
  Kind kind;
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
};

using Member = std::variant<std::string Config::*, bool Config::*, int Config::*, int64_t Config::*, uint64_t Config::*,
                            double Config::*>;

struct KeySpec {
  const char* name;  // "section.key"
  KeyType type;
  Member member;
  bool secret = false;  // masked by describe_config()
};

// A value read for some key: text, boolean, whole number or fraction.
using Value = std::variant<std::string, bool, uint64_t, double>;

// Every key, in the order of conf/reprox.toml.
const std::vector<KeySpec>& all_keys();

// The key named `name`, or nullptr.
const KeySpec* find_key(std::string_view name);

// Reads a file value of `type` for the key called `name`.
Value value_from_node(const std::string& name, KeyType type, const toml::node& node);

// Reads a flag's or a variable's value of `type` for the key called `name`.
Value value_from_text(const std::string& name, KeyType type, const std::string& text);

// Writes `value` into the key's member; throws when it does not fit.
void store(const KeySpec& key, const Value& value, Config& config);

// The key's effective value in TOML-ish form ("\"cpu\"", "true", "3600").
std::string format_value(const KeySpec& key, const Config& config);

// `rule` as one TOML inline table.
std::string format_rule(const CacheRuleConfig& rule);

}  // namespace reprox::config_keys
