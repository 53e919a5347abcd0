#include "common/json.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace reprox::json {

bool Value::is_integer() const {
  switch (type()) {
    case Type::Int:
    case Type::Uint: return true;
    case Type::Double: {
      double d = std::get<double>(v_);
      return std::isfinite(d) && std::floor(d) == d;
    }
    default: return false;
  }
}

double Value::as_double() const {
  switch (type()) {
    case Type::Int: return static_cast<double>(std::get<int64_t>(v_));
    case Type::Uint: return static_cast<double>(std::get<uint64_t>(v_));
    case Type::Double: return std::get<double>(v_);
    default: return 0;
  }
}

int64_t Value::as_int() const {
  switch (type()) {
    case Type::Int: return std::get<int64_t>(v_);
    case Type::Uint: {
      uint64_t u = std::get<uint64_t>(v_);
      return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
    }
    case Type::Double: {
      double d = std::get<double>(v_);
      if (!(d > -9.2e18)) return INT64_MIN;
      if (!(d < 9.2e18)) return INT64_MAX;
      return static_cast<int64_t>(d);
    }
    default: return 0;
  }
}

uint64_t Value::as_uint() const {
  switch (type()) {
    case Type::Int: {
      int64_t i = std::get<int64_t>(v_);
      return i < 0 ? 0 : static_cast<uint64_t>(i);
    }
    case Type::Uint: return std::get<uint64_t>(v_);
    case Type::Double: {
      double d = std::get<double>(v_);
      if (!(d > 0)) return 0;
      if (!(d < 1.8e19)) return UINT64_MAX;
      return static_cast<uint64_t>(d);
    }
    default: return 0;
  }
}

json::Object& Value::mutable_object() {
  auto& p = std::get<ObjPtr>(v_);
  if (p.use_count() > 1) p = std::make_shared<json::Object>(*p);
  return *p;
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : as_object())
    if (k == key) return &v;
  return nullptr;
}

void Value::set(std::string_view key, Value v) {
  if (!is_object()) *this = Value(json::Object{});
  auto& obj = mutable_object();
  for (auto& [k, old] : obj)
    if (k == key) {
      old = std::move(v);
      return;
    }
  obj.emplace_back(std::string(key), std::move(v));
}

namespace {

bool convert(simdjson::dom::element e, Value& out, size_t depth, size_t max_depth, std::string& err) {
  if (depth > max_depth) {
    err = "JSON nesting is too deep";
    return false;
  }
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::NULL_VALUE: out = Value(); return true;
    case T::BOOL: out = Value(bool(e.get_bool().value_unsafe())); return true;
    case T::INT64: out = Value(int64_t(e.get_int64().value_unsafe())); return true;
    case T::UINT64: out = Value(uint64_t(e.get_uint64().value_unsafe())); return true;
    case T::DOUBLE: out = Value(double(e.get_double().value_unsafe())); return true;
    case T::STRING: out = Value(std::string_view(e.get_string().value_unsafe())); return true;
    case T::ARRAY: {
      json::Array arr;
      // Named: value_unsafe() returns a reference into a temporary result.
      simdjson::dom::array elements = e.get_array().value_unsafe();
      for (auto child : elements) {
        arr.emplace_back();
        if (!convert(child, arr.back(), depth + 1, max_depth, err)) return false;
      }
      out = Value(std::move(arr));
      return true;
    }
    case T::OBJECT: {
      json::Object obj;
      simdjson::dom::object fields = e.get_object().value_unsafe();
      for (auto field : fields) {
        Value v;
        if (!convert(field.value, v, depth + 1, max_depth, err)) return false;
        std::string_view k = field.key;
        auto it = std::find_if(obj.begin(), obj.end(), [&](const auto& kv) { return kv.first == k; });
        if (it != obj.end())
          it->second = std::move(v);  // duplicate key: last wins, as JavaScript and Python do
        else
          obj.emplace_back(std::string(k), std::move(v));
      }
      out = Value(std::move(obj));
      return true;
    }
  }
  err = "unknown JSON element";
  return false;
}

}  // namespace

// Integers past 64 bits (Hugging Face's tokenizer_config.json writes
// model_max_length as 1000000000000000019884624838656) are valid JSON that
// simdjson refuses; JavaScript and Python read them as doubles. Rewrites each
// such literal outside strings as a double ("...e0").
std::string widen_big_integers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) out.push_back(text[++i]);
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    if (c >= '0' && c <= '9' && (i == 0 || !(text[i - 1] >= '0' && text[i - 1] <= '9'))) {
      size_t j = i;
      while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
      out.append(text.data() + i, j - i);
      // A whole number token: starts a value (after ':', ',', '[' or an
      // optional '-') and has no fraction or exponent.
      size_t k = i > 0 && text[i - 1] == '-' ? i - 1 : i;
      while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\n' || text[k - 1] == '\r' || text[k - 1] == '\t')) --k;
      bool starts_value = k == 0 || text[k - 1] == ':' || text[k - 1] == ',' || text[k - 1] == '[';
      bool integer_literal = starts_value && (j == text.size() || (text[j] != '.' && text[j] != 'e' && text[j] != 'E'));
      if (integer_literal && j - i > 19) out += "e0";
      i = j - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

ParseError parse(std::string_view text, Value& out, size_t max_depth) {
  // One parser per thread: simdjson parsers are reusable but not shareable.
  thread_local simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  auto error = parser.parse(padded).get(root);
  std::string widened;
  if (error == simdjson::NUMBER_ERROR) {
    widened = widen_big_integers(text);
    padded = simdjson::padded_string(widened);
    error = parser.parse(padded).get(root);
  }
  if (error) return ParseError{std::string("invalid JSON: ") + simdjson::error_message(error)};
  std::string err;
  if (!convert(root, out, 0, max_depth, err)) return ParseError{err};
  return {};
}

namespace {

// Whether any of the 8 bytes in `w` needs escaping in a JSON string: a
// control byte (< 0x20), '"' or '\\'. Bytes >= 0x80 (UTF-8) never do.
// Each test works on the low 7 bits of every byte, where adding a constant
// cannot carry into the next byte, so every byte is judged on its own.
inline bool needs_escape(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto is_byte = [&](uint64_t c) {  // high bit of each byte that equals c
    uint64_t x = w ^ (ones * c);
    return ~(((x & ~highs) + ones * 0x7F) | x) & highs;
  };
  uint64_t control = ~(((w & ~highs) + ones * 0x60) | w) & highs;  // high bit set iff byte < 0x20
  return (control | is_byte('"') | is_byte('\\')) != 0;
}

}  // namespace

void write_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  size_t run = 0;  // start of the pending unescaped run
  for (size_t i = 0; i < s.size(); ++i) {
    // Skip eight plain bytes at a time (answers are mostly plain text).
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (needs_escape(w)) break;
      i += 8;
    }
    if (i >= s.size()) break;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

void write_int(std::string& out, int64_t i) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}

void write_uint(std::string& out, uint64_t u) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, u);
  out.append(buf, r.ptr);
}

void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) {  // JSON has no NaN/Inf; never produced by parse
    out += "null";
    return;
  }
  if (std::floor(d) == d && std::fabs(d) < 9007199254740992.0) {
    write_int(out, static_cast<int64_t>(d));  // also maps -0 to 0
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip
  out.append(buf, r.ptr);
}

void dump(const Value& v, std::string& out, bool sort_keys) {
  switch (v.type()) {
    case Value::Type::Null: out += "null"; break;
    case Value::Type::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Value::Type::Int: write_int(out, v.as_int()); break;
    case Value::Type::Uint: write_uint(out, v.as_uint()); break;
    case Value::Type::Double: write_number(out, v.as_double()); break;
    case Value::Type::String: write_string(out, v.as_string()); break;
    case Value::Type::Array: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.as_array()) {
        if (!first) out.push_back(',');
        first = false;
        dump(e, out, sort_keys);
      }
      out.push_back(']');
      break;
    }
    case Value::Type::Object: {
      const auto& obj = v.as_object();
      std::vector<const std::pair<std::string, Value>*> items;
      items.reserve(obj.size());
      for (const auto& kv : obj) items.push_back(&kv);
      if (sort_keys)
        std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out.push_back('{');
      bool first = true;
      for (const auto* kv : items) {
        if (!first) out.push_back(',');
        first = false;
        write_string(out, kv->first);
        out.push_back(':');
        dump(kv->second, out, sort_keys);
      }
      out.push_back('}');
      break;
    }
  }
}

std::string dump(const Value& v, bool sort_keys) {
  std::string out;
  dump(v, out, sort_keys);
  return out;
}

std::string utf8_lossy(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len > 0 && i + len <= s.size() && valid_utf8(s.substr(i, len))) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

}  // namespace reprox::json
