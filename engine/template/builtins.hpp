// Built-in filters, tests, methods and global functions, with the
// semantics of Jinja2 3.1 under Hugging Face's ImmutableSandboxedEnvironment
// (tojson is Hugging Face's json.dumps-based one). Names are resolved at
// compile time so an unsupported one is refused before any render.
// All functions are reentrant and report failure through Fault, never by
// throwing.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/template/value.hpp"

namespace reprox::tmpl {

// The first error of a render. raised: it came from raise_exception().
struct Fault {
  std::string message;
  bool raised = false;
  bool set = false;
  void fail(std::string msg, bool from_template = false) {
    if (set) return;
    set = true;
    message = std::move(msg);
    raised = from_template;
  }
};

// Bytes one filter, method or tojson call may produce (as much as a `*`
// string repetition); past it the call fails instead of allocating.
inline constexpr size_t kMaxBuiltinBytes = size_t{1} << 24;

// str.replace within kMaxBuiltinBytes: false (and a fault) when the result
// would be larger.
bool bounded_replace(std::string_view s, std::string_view old, std::string_view with, long count,
                     std::string& out, Fault& fault);

struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // Python-style binding: positional index, else keyword name; nullptr if absent.
  const Value* get(size_t index, std::string_view name) const;
};

int find_filter(std::string_view name);  // -1 when unsupported
int find_test(std::string_view name);    // -1 when unsupported
bool is_known_method(std::string_view name);
bool is_global_function(std::string_view name);
std::string supported_filters();  // comma-separated, for error messages
std::string supported_tests();

Value apply_filter(int id, const Value& operand, const CallArgs& args, Fault& fault);
bool apply_test(int id, const Value& operand, const CallArgs& args, Fault& fault);
// Attribute `name` of a value: a dict key, a namespace attribute, a loop
// property, or a bound method. Undefined when absent.
Value get_attribute(const Value& obj, const std::string& name, Fault& fault);
// obj[key] with Jinja2 fallbacks (item first, then attribute for strings keys).
Value get_item(const Value& obj, const Value& key, Fault& fault);
Value call_method(const Value& self, const std::string& name, const CallArgs& args, Fault& fault);
Value call_global(const std::string& name, const CallArgs& args, Fault& fault);

// Iteration as Python's iter(): lists/tuples, dict keys, string code points;
// Undefined iterates as empty. False (and a fault) for non-iterables.
bool iterate(const Value& v, List& out, Fault& fault);
// len(); false (and a fault) when the value has no length.
bool length_of(const Value& v, int64_t& out, Fault& fault);
// `needle in haystack`.
bool contains(const Value& haystack, const Value& needle, Fault& fault);
// Hugging Face's tojson: json.dumps(ensure_ascii=False, indent, separators, sort_keys).
bool to_json(const Value& v, std::string& out, int indent, bool sort_keys, const std::string& item_sep,
             const std::string& key_sep, Fault& fault);

}  // namespace reprox::tmpl
