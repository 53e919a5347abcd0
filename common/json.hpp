// A small owned JSON value, parsed with simdjson and written compactly.
// Used for request bodies (kept whole where the key needs them), canonical
// keys (sorted output) and response rendering. Numbers keep their integer
// form when the source had one, so a 64-bit seed survives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace reprox::json {

class Value;
using Array = std::vector<Value>;
// Insertion-ordered; duplicate keys are resolved at parse time (last wins).
using Object = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  enum class Type { Null, Bool, Int, Uint, Double, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(int64_t i) : v_(i) {}
  Value(uint64_t u) : v_(u) {}
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(json::Array a) : v_(std::make_shared<json::Array>(std::move(a))) {}
  Value(json::Object o) : v_(std::make_shared<json::Object>(std::move(o))) {}

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::Null; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_number() const {
    auto t = type();
    return t == Type::Int || t == Type::Uint || t == Type::Double;
  }
  bool is_integer() const;  // Int, Uint, or a Double with an integral value
  bool is_string() const { return type() == Type::String; }
  bool is_array() const { return type() == Type::Array; }
  bool is_object() const { return type() == Type::Object; }

  bool as_bool() const { return std::get<bool>(v_); }
  double as_double() const;  // any number
  int64_t as_int() const;    // any number, truncated and clamped; caller checks range
  uint64_t as_uint() const;  // any number, truncated and clamped to [0, 2^64)
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const json::Array& as_array() const { return *std::get<ArrPtr>(v_); }
  const json::Object& as_object() const { return *std::get<ObjPtr>(v_); }
  json::Object& mutable_object();  // copy-on-write

  // Object lookup; nullptr when absent or not an object.
  const Value* find(std::string_view key) const;
  // Object insert-or-assign (keeps position of an existing key).
  void set(std::string_view key, Value v);

 private:
  using ArrPtr = std::shared_ptr<json::Array>;
  using ObjPtr = std::shared_ptr<json::Object>;
  std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, ArrPtr, ObjPtr> v_;
};

struct ParseError {
  std::string message;  // empty on success
  explicit operator bool() const { return !message.empty(); }
};

// Parses a whole document. Fails on invalid JSON, invalid UTF-8, trailing
// content, or nesting deeper than max_depth. Never throws.
ParseError parse(std::string_view text, Value& out, size_t max_depth = 64);

// Compact JSON. sort_keys gives the canonical form: keys in byte order,
// numbers in shortest round-trip form, integral doubles below 2^53 as integers.
void dump(const Value& v, std::string& out, bool sort_keys = false);
std::string dump(const Value& v, bool sort_keys = false);

// Building blocks for hand-written rendering on hot paths.
void write_string(std::string& out, std::string_view s);  // quoted, escaped
void write_number(std::string& out, double d);            // canonical form
void write_int(std::string& out, int64_t i);
void write_uint(std::string& out, uint64_t u);

// True when s is well-formed UTF-8.
bool valid_utf8(std::string_view s);
// `s` with every ill-formed UTF-8 sequence replaced by U+FFFD, so it can be
// written as a JSON string (e.g. a token that is half of a character).
std::string utf8_lossy(std::string_view s);

}  // namespace reprox::json
