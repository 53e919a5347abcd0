// Attribute and item access, iteration, len() and `in`.
#include <string>

#include "engine/template/builtins.hpp"
#include "engine/template/py_text.hpp"

namespace reprox::tmpl {
namespace {

bool is_str_method(std::string_view n) {
  static const char* const kNames[] = {"strip",   "lstrip",  "rstrip",     "split",   "rsplit",  "startswith",
                                       "endswith", "replace", "upper",      "lower",   "title",   "capitalize",
                                       "find",    "rfind",   "count",      "join",    "splitlines", "isdigit",
                                       "isalpha", "isalnum", "isspace",    "isupper", "islower", "format"};
  for (const char* k : kNames)
    if (n == k) return true;
  return false;
}

bool is_dict_method(std::string_view n) { return n == "items" || n == "keys" || n == "values" || n == "get"; }

Value bound(const Value& self, const std::string& name) {
  return Value::callable(Callable{Callable::Type::Method, name, std::make_shared<const Value>(self), nullptr});
}

Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" + name + "'");
}

Value loop_attribute(const LoopState& l, const std::string& name) {
  int64_t n = l.items ? static_cast<int64_t>(l.items->size()) : 0;
  int64_t i = static_cast<int64_t>(l.index0);
  if (name == "index") return Value(i + 1);
  if (name == "index0") return Value(i);
  if (name == "revindex") return Value(n - i);
  if (name == "revindex0") return Value(n - i - 1);
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i == n - 1);
  if (name == "length") return Value(n);
  if (name == "depth") return Value(int64_t{l.depth});
  if (name == "depth0") return Value(int64_t{l.depth - 1});
  if (name == "previtem")
    return i > 0 ? (*l.items)[i - 1] : Value::undefined("there is no previous item");
  if (name == "nextitem")
    return i + 1 < n ? (*l.items)[i + 1] : Value::undefined("there is no next item");
  return Value::undefined("'LoopContext object' has no attribute '" + name + "'");
}

}  // namespace

const Value* CallArgs::get(size_t index, std::string_view name) const {
  if (index < pos.size()) return &pos[index];
  for (const auto& kv : kw)
    if (kv.first == name) return &kv.second;
  return nullptr;
}

bool is_known_method(std::string_view name) {
  return is_str_method(name) || is_dict_method(name) || name == "cycle";
}

bool is_global_function(std::string_view name) {
  return name == "raise_exception" || name == "strftime_now" || name == "namespace" || name == "range" ||
         name == "dict";
}

Value get_attribute(const Value& obj, const std::string& name, Fault& fault) {
  switch (obj.kind()) {
    case Value::Kind::Undefined: fault.fail(obj.undefined_hint()); return {};
    case Value::Kind::Dict:
      if (is_dict_method(name)) return bound(obj, name);
      if (const Value* v = obj.as_dict().find(name)) return *v;
      return missing_attr(obj, name);
    case Value::Kind::String:
      if (is_str_method(name)) return bound(obj, name);
      return missing_attr(obj, name);
    case Value::Kind::Namespace:
      if (const Value* v = obj.as_namespace().attrs.find(name)) return *v;
      return missing_attr(obj, name);
    case Value::Kind::Loop:
      if (name == "cycle") return bound(obj, name);
      return loop_attribute(obj.as_loop(), name);
    default: return missing_attr(obj, name);
  }
}

Value get_item(const Value& obj, const Value& key, Fault& fault) {
  switch (obj.kind()) {
    case Value::Kind::Undefined: fault.fail(obj.undefined_hint()); return {};
    case Value::Kind::List:
    case Value::Kind::Tuple:
    case Value::Kind::String: {
      if (!key.is_int()) break;
      int64_t i = key.as_int();
      if (obj.is_string()) {
        const std::string& s = obj.as_string();
        if (py::is_ascii(s)) {
          int64_t n = static_cast<int64_t>(s.size());
          if (i < 0) i += n;
          if (i < 0 || i >= n) return Value::undefined("string index out of range");
          return Value(std::string(1, s[i]));
        }
        auto cps = py::decode(s);
        int64_t n = static_cast<int64_t>(cps.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("string index out of range");
        std::string out;
        py::append_utf8(out, cps[i]);
        return Value(std::move(out));
      }
      const List& l = obj.as_list();
      int64_t n = static_cast<int64_t>(l.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::undefined(std::string(obj.type_name()) + " index out of range");
      return l[i];
    }
    case Value::Kind::Dict:
      if (key.is_string()) {
        if (const Value* v = obj.as_dict().find(key.as_string())) return *v;
      }
      break;
    default: break;
  }
  if (key.is_string()) return get_attribute(obj, key.as_string(), fault);
  std::string k;
  key.append_repr(k);
  return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute " + k);
}

bool iterate(const Value& v, List& out, Fault& fault) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return true;
    case Value::Kind::List:
    case Value::Kind::Tuple: out = v.as_list(); return true;
    case Value::Kind::Dict:
      out.reserve(v.as_dict().items.size());
      for (const auto& kv : v.as_dict().items) out.emplace_back(kv.first);
      return true;
    case Value::Kind::String:
      for (char32_t c : py::decode(v.as_string())) {
        std::string s;
        py::append_utf8(s, c);
        out.emplace_back(std::move(s));
      }
      return true;
    default: fault.fail("'" + std::string(v.type_name()) + "' object is not iterable"); return false;
  }
}

bool length_of(const Value& v, int64_t& out, Fault& fault) {
  switch (v.kind()) {
    case Value::Kind::Undefined: out = 0; return true;
    case Value::Kind::String: out = static_cast<int64_t>(py::length(v.as_string())); return true;
    case Value::Kind::List:
    case Value::Kind::Tuple: out = static_cast<int64_t>(v.as_list().size()); return true;
    case Value::Kind::Dict: out = static_cast<int64_t>(v.as_dict().items.size()); return true;
    default: fault.fail("object of type '" + std::string(v.type_name()) + "' has no len()"); return false;
  }
}

bool contains(const Value& haystack, const Value& needle, Fault& fault) {
  switch (haystack.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!needle.is_string()) {
        fault.fail("'in <string>' requires string as left operand, not " + std::string(needle.type_name()));
        return false;
      }
      return haystack.as_string().find(needle.as_string()) != std::string::npos;
    case Value::Kind::List:
    case Value::Kind::Tuple:
      for (const auto& e : haystack.as_list())
        if (py_equal(e, needle)) return true;
      return false;
    case Value::Kind::Dict: return needle.is_string() && haystack.as_dict().find(needle.as_string()) != nullptr;
    case Value::Kind::Namespace:
      return needle.is_string() && haystack.as_namespace().attrs.find(needle.as_string()) != nullptr;
    default:
      fault.fail("argument of type '" + std::string(haystack.type_name()) + "' is not iterable");
      return false;
  }
}

}  // namespace reprox::tmpl
