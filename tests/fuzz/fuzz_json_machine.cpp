// Fuzz target: JSON mode's recognizer (JsonMachine) against simdjson.
// Properties: a text the machine takes whole as a complete document is one
// JSON object that simdjson parses; a one-object text that simdjson parses,
// with no byte after the object and within the machine's bounds, the
// machine takes whole; the machine never takes a byte after a complete
// document; states with equal keys take the same next bytes; and with a
// schema that bounds lengths, counts and numbers, has an anyOf of objects
// and a date-time, every document taken meets the bounds and follows one branch, and every prefix taken can go on (some byte follows it,
// or it is complete).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "engine/sampling/json_machine.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using reprox::engine::JsonMachine;
std::string schema_error;

// Where simdjson and RFC 8259 part: numbers past a double's range and
// lone surrogate escapes. Such texts are not compared.
bool parsers_may_differ(std::string_view s) {
  if (s.find("\\u") != std::string_view::npos) return true;
  size_t digits = 0;
  for (const char c : s) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits >= 15 || c == 'e' || c == 'E') return true;
  }
  return false;
}

// Within the machine's bounds: no whitespace run past its limit and no
// nesting past its depth, both counted outside strings only.
bool within_bounds(std::string_view s) {
  int run = 0, depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : s) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    run = (c == ' ' || c == '\n' || c == '\r' || c == '\t') ? run + 1 : 0;
    if (run > JsonMachine::kMaxWhitespaceRun) return false;
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  return deepest <= JsonMachine::kMaxDepth;
}

// The bounded schema's constraints, checked on a parsed document.
const char* kBoundedSchema =
    R"({"type":"object","properties":{"n":{"type":"integer","minimum":-5,"maximum":300},)"
    R"("x":{"type":"number","exclusiveMinimum":0,"maximum":2.5},"s":{"type":"string","minLength":1,"maxLength":3},)"
    R"("l":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2},)"
    R"("u":{"anyOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer","maximum":3}},)"
    R"("required":["kind","x"],"additionalProperties":false},)"
    R"({"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"],"additionalProperties":false},)"
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":2}},"required":["name"],)"
    R"("additionalProperties":false}]},"d":{"type":"string","format":"date-time"}}})";

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// The union "u": {"kind":"a","x":<= 3}, {"kind":"b"} or {"name": up to 2 code points}.
bool follows_a_branch(const reprox::json::Object& u) {
  if (u.empty()) return false;
  const auto& [first, value] = u[0];
  if (first == "name") return u.size() == 1 && value.is_string() && code_points(value.as_string()) <= 2;
  if (first != "kind" || !value.is_string()) return false;
  if (value.as_string() == "b") return u.size() == 1;
  return value.as_string() == "a" && u.size() == 2 && u[1].first == "x" && u[1].second.is_integer() &&
         u[1].second.as_double() <= 3;
}

bool meets_bounds(const reprox::json::Value& doc) {
  if (const auto* n = doc.find("n"); n && (!n->is_integer() || n->as_double() < -5 || n->as_double() > 300))
    return false;
  if (const auto* x = doc.find("x"); x && (!x->is_number() || x->as_double() <= 0 || x->as_double() > 2.5))
    return false;
  if (const auto* s = doc.find("s"); s && (!s->is_string() || code_points(s->as_string()) < 1 ||
                                          code_points(s->as_string()) > 3))
    return false;
  if (const auto* l = doc.find("l"); l && (!l->is_array() || l->as_array().empty() || l->as_array().size() > 2))
    return false;
  if (const auto* d = doc.find("d"); d && (!d->is_string() || d->as_string().size() < 20)) return false;
  if (const auto* u = doc.find("u")) return u->is_object() && follows_a_branch(u->as_object());
  return true;
}

// Follows the bounded schema over the text; every prefix it takes must
// have some next byte or be complete.
void check_bounded(std::string_view text) {
  static const auto schema = reprox::engine::JsonSchema::compile_text(kBoundedSchema, &schema_error);
  FUZZ_CHECK(schema != nullptr, "the bounded fuzz schema compiles");
  JsonMachine m(schema.get());
  size_t taken = 0;
  for (; taken < text.size(); ++taken) {
    bool goes_on = m.complete();
    for (int byte = 0; byte < 256 && !goes_on; ++byte) {
      JsonMachine next = m;
      goes_on = next.feed(static_cast<uint8_t>(byte));
    }
    FUZZ_CHECK(goes_on, "a prefix the bounded schema takes can go on");
    if (!m.feed(static_cast<uint8_t>(text[taken]))) break;
  }
  // Keys cut at a horizon of one byte: equal keys take the same next byte.
  if (taken >= 2) {
    JsonMachine a(schema.get()), b(schema.get());
    a.feed(text.substr(0, taken / 2));
    b.feed(text.substr(0, taken));
    std::string ka, kb;
    a.append_key(&ka, 1);
    b.append_key(&kb, 1);
    if (ka == kb)
      for (int byte = 0; byte < 256; ++byte) {
        JsonMachine x = a, y = b;
        FUZZ_CHECK(x.feed(static_cast<uint8_t>(byte)) == y.feed(static_cast<uint8_t>(byte)),
                   "states with equal one-byte keys take the same next byte");
      }
  }
  if (taken < text.size() || !m.complete() || parsers_may_differ(text)) return;
  reprox::json::Value v;
  FUZZ_CHECK(!reprox::json::parse(text, v), "a document the bounded schema takes parses");
  FUZZ_CHECK(meets_bounds(v), "a document the bounded schema takes meets its bounds");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  JsonMachine m;
  size_t taken = 0;
  while (taken < size && m.feed(data[taken])) {
    ++taken;
    if (m.complete() && taken < size) {
      JsonMachine after = m;
      FUZZ_CHECK(!after.feed(data[taken]), "a complete document takes no more bytes");
    }
  }
  const bool machine = taken == size && m.complete();

  // A schema only narrows the language.
  static const auto schema = reprox::engine::JsonSchema::compile_text(
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":["string","null"]},)"
      R"("c":{"type":"array","items":{"enum":[1,"x",{"k":[]}]}},"d":{}},"required":["b"]})",
      &schema_error);
  FUZZ_CHECK(schema != nullptr, "the fuzz schema compiles");
  JsonMachine follows(schema.get());
  if (follows.feed(text) && follows.complete()) FUZZ_CHECK(machine, "a document that follows a schema is JSON");

  // Equal keys, equal futures: two accepted prefixes whose states have the
  // same key take exactly the same next bytes.
  if (taken >= 2) {
    JsonMachine a, b;
    a.feed(text.substr(0, taken / 2));
    b.feed(text.substr(0, taken));
    std::string ka, kb;
    a.append_key(&ka);
    b.append_key(&kb);
    if (ka == kb)
      for (int byte = 0; byte < 256; ++byte) {
        JsonMachine x = a, y = b;
        FUZZ_CHECK(x.feed(static_cast<uint8_t>(byte)) == y.feed(static_cast<uint8_t>(byte)),
                   "states with equal keys take the same bytes");
      }
  }

  check_bounded(text);

  if (parsers_may_differ(text)) return 0;
  reprox::json::Value v;
  const bool parser = reprox::json::valid_utf8(text) && !reprox::json::parse(text, v) && v.is_object() &&
                      size > 0 && text.back() == '}';
  if (machine) FUZZ_CHECK(parser, "a document the machine takes is one object simdjson parses");
  if (parser && within_bounds(text)) FUZZ_CHECK(machine, "a parsed object within bounds is taken whole");
  return 0;
}
