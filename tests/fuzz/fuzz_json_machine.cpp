// Fuzz target: JSON mode's recognizer (JsonMachine) against simdjson.
// Properties: a text the machine takes whole as a complete document is one
// JSON object that simdjson parses; a one-object text that simdjson parses,
// with no byte after the object and within the machine's bounds, the
// machine takes whole; the machine never takes a byte after a complete
// document; and states with equal keys take the same next bytes.
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

  if (parsers_may_differ(text)) return 0;
  reprox::json::Value v;
  const bool parser = reprox::json::valid_utf8(text) && !reprox::json::parse(text, v) && v.is_object() &&
                      size > 0 && text.back() == '}';
  if (machine) FUZZ_CHECK(parser, "a document the machine takes is one object simdjson parses");
  if (parser && within_bounds(text)) FUZZ_CHECK(machine, "a parsed object within bounds is taken whole");
  return 0;
}
