// Methods of str/dict/loop values and the global functions Hugging Face
// provides (raise_exception, strftime_now) plus Jinja2's namespace, range
// and dict.
#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>

#include "engine/template/builtins.hpp"
#include "engine/template/py_text.hpp"

namespace reprox::tmpl {
namespace {

constexpr int64_t kMaxRange = 100000;  // Jinja2 sandbox MAX_RANGE

bool opt_string(const CallArgs& a, size_t i, const char* name, const std::string** out, Fault& fault) {
  const Value* v = a.get(i, name);
  *out = nullptr;
  if (!v || v->is_none()) return true;
  if (!v->is_string()) {
    fault.fail(std::string("argument '") + name + "' must be str or None, not " + v->type_name());
    return false;
  }
  *out = &v->as_string();
  return true;
}

bool opt_int(const CallArgs& a, size_t i, const char* name, int64_t dflt, int64_t* out, Fault& fault) {
  const Value* v = a.get(i, name);
  *out = dflt;
  if (!v) return true;
  if (!v->is_int()) {
    fault.fail(std::string("argument '") + name + "' must be int, not " + v->type_name());
    return false;
  }
  *out = v->as_int();
  return true;
}

bool affix_match(const std::string& s, const Value& arg, bool prefix, Fault& fault) {
  auto one = [&](const Value& p) {
    if (!p.is_string()) {
      fault.fail(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str, not " +
                 p.type_name());
      return false;
    }
    const std::string& x = p.as_string();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (arg.kind() == Value::Kind::Tuple) {
    for (const auto& p : arg.as_list())
      if (one(p)) return true;
    return false;
  }
  return one(arg);
}

Value string_list(std::vector<std::string> parts) {
  List l;
  l.reserve(parts.size());
  for (auto& p : parts) l.emplace_back(std::move(p));
  return Value::list(std::move(l));
}

std::vector<std::string> splitlines(const std::string& s) {
  std::vector<std::string> out;
  auto cps = py::decode(s);
  std::vector<char32_t> cur;
  for (size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
               c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) {
      cur.push_back(c);
      continue;
    }
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    out.push_back(py::encode(cur));
    cur.clear();
  }
  if (!cur.empty()) out.push_back(py::encode(cur));
  return out;
}

// str.format with auto/explicit positional and keyword fields, no format specs.
Value str_format(const std::string& fmt, const CallArgs& a, Fault& fault) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}' ) {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      out.push_back('}');
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) {
      fault.fail("Single '{' encountered in format string");
      return {};
    }
    std::string field = fmt.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) {
      fault.fail("unsupported: str.format field '{" + field + "}' (only plain positional or named fields)");
      return {};
    }
    const Value* v = nullptr;
    if (field.empty()) {
      v = auto_index < a.pos.size() ? &a.pos[auto_index] : nullptr;
      ++auto_index;
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      size_t k = 0;
      const bool in_range = std::from_chars(field.data(), field.data() + field.size(), k).ec == std::errc();
      v = in_range && k < a.pos.size() ? &a.pos[k] : nullptr;
    } else {
      for (const auto& kv : a.kw)
        if (kv.first == field) v = &kv.second;
    }
    if (!v) {
      fault.fail("str.format: no value for field '{" + field + "}'");
      return {};
    }
    v->append_str(out);
    if (out.size() > kMaxBuiltinBytes) {
      fault.fail("format result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)");
      return {};
    }
    i = close;
  }
  return Value(std::move(out));
}

Value strip_method(const std::string& s, const std::string& name, const CallArgs& a, Fault& fault) {
  const std::string* chars;
  if (!opt_string(a, 0, "chars", &chars, fault)) return {};
  auto side = name == "strip" ? py::StripSide::Both : name == "lstrip" ? py::StripSide::Left : py::StripSide::Right;
  return Value(py::strip(s, side, chars));
}

Value split_method(const std::string& s, const std::string& name, const CallArgs& a, Fault& fault) {
  const std::string* sep;
  int64_t maxsplit;
  if (!opt_string(a, 0, "sep", &sep, fault) || !opt_int(a, 1, "maxsplit", -1, &maxsplit, fault)) return {};
  if (sep && sep->empty()) {
    fault.fail("empty separator");
    return {};
  }
  return string_list(name == "split" ? py::split(s, sep, maxsplit) : py::rsplit(s, sep, maxsplit));
}

// Occurrences str.replace would substitute (code points + 1 bounds an empty `old`).
size_t replacements(std::string_view s, std::string_view old, long count) {
  size_t n = 0;
  if (old.empty()) {
    n = s.size() + 1;
  } else {
    for (size_t pos = s.find(old); pos != std::string_view::npos; pos = s.find(old, pos + old.size())) ++n;
  }
  return count < 0 ? n : std::min(n, static_cast<size_t>(count));
}

}  // namespace

bool bounded_replace(std::string_view s, std::string_view old, std::string_view with, long count,
                     std::string& out, Fault& fault) {
  const size_t n = replacements(s, old, count);
  const size_t growth = with.size() > old.size() ? with.size() - old.size() : 0;
  if (n > 0 && growth > 0 && (growth > kMaxBuiltinBytes / n || s.size() + growth * n > kMaxBuiltinBytes)) {
    fault.fail("replace result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)");
    return false;
  }
  out = py::replace(s, old, with, count);
  return true;
}

namespace {

Value replace_method(const std::string& s, const CallArgs& a, Fault& fault) {
  const Value* o = a.get(0, "old");
  const Value* w = a.get(1, "new");
  int64_t count;
  if (!o || !w || !o->is_string() || !w->is_string()) {
    fault.fail("replace() arguments must be str");
    return {};
  }
  if (!opt_int(a, 2, "count", -1, &count, fault)) return {};
  std::string out;
  if (!bounded_replace(s, o->as_string(), w->as_string(), count, out, fault)) return {};
  return Value(std::move(out));
}

// find/rfind answer code-point offsets (-1 when absent); count counts
// non-overlapping occurrences.
Value find_method(const std::string& s, const std::string& name, const CallArgs& a, Fault& fault) {
  const Value* sub = a.get(0, "sub");
  if (!sub || !sub->is_string()) {
    fault.fail(name + "() argument must be str");
    return {};
  }
  const std::string& x = sub->as_string();
  if (name == "count") {
    if (x.empty()) return Value(static_cast<int64_t>(py::length(s)) + 1);
    int64_t n = 0;
    for (size_t k = s.find(x); k != std::string::npos; k = s.find(x, k + x.size())) ++n;
    return Value(n);
  }
  size_t k = name == "find" ? s.find(x) : s.rfind(x);
  if (k == std::string::npos) return Value(int64_t{-1});
  return Value(static_cast<int64_t>(py::length(std::string_view(s).substr(0, k))));
}

Value join_method(const std::string& s, const CallArgs& a, Fault& fault) {
  const Value* it = a.get(0, "iterable");
  List items;
  if (!it || !iterate(*it, items, fault)) return {};
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      fault.fail("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].type_name() +
                 " found");
      return {};
    }
    if (i) out += s;
    out += items[i].as_string();
    if (out.size() > kMaxBuiltinBytes) {
      fault.fail("join result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)");
      return {};
    }
  }
  return Value(std::move(out));
}

// isdigit/isalpha/isalnum/isspace/isupper/islower over code points; false
// for "". Any other name answers true for a non-empty string (callers only
// pass known methods).
Value predicate_method(const std::string& s, const std::string& name) {
  auto cps = py::decode(s);
  if (cps.empty()) return Value(false);
  bool all = true, cased = false;
  for (char32_t c : cps) {
    bool digit = c >= '0' && c <= '9';
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0x80 && (py::is_cased_upper(c) || py::is_cased_lower(c)));
    if (name == "isdigit") all = all && digit;
    if (name == "isalpha") all = all && alpha;
    if (name == "isalnum") all = all && (alpha || digit);
    if (name == "isspace") all = all && py::is_space(c);
    if (name == "isupper") {
      all = all && !py::is_cased_lower(c);
      cased = cased || py::is_cased_upper(c);
    }
    if (name == "islower") {
      all = all && !py::is_cased_upper(c);
      cased = cased || py::is_cased_lower(c);
    }
  }
  if (name == "isupper" || name == "islower") return Value(all && cased);
  return Value(all);
}

Value string_method(const std::string& s, const std::string& name, const CallArgs& a, Fault& fault) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") return strip_method(s, name, a, fault);
  if (name == "split" || name == "rsplit") return split_method(s, name, a, fault);
  if (name == "startswith" || name == "endswith") {
    if (a.pos.empty()) {
      fault.fail(name + "() takes at least 1 argument (0 given)");
      return {};
    }
    return Value(affix_match(s, a.pos[0], name == "startswith", fault));
  }
  if (name == "replace") return replace_method(s, a, fault);
  if (name == "upper") return Value(py::upper(s));
  if (name == "lower") return Value(py::lower(s));
  if (name == "title") return Value(py::title(s));
  if (name == "capitalize") return Value(py::capitalize(s));
  if (name == "find" || name == "rfind" || name == "count") return find_method(s, name, a, fault);
  if (name == "join") return join_method(s, a, fault);
  if (name == "splitlines") return string_list(splitlines(s));
  if (name == "format") return str_format(s, a, fault);
  return predicate_method(s, name);
}

Value dict_method(const Value& self, const std::string& name, const CallArgs& a, Fault& fault) {
  const Dict& d = self.as_dict();
  if (name == "get") {
    const Value* k = a.get(0, "key");
    if (!k) {
      fault.fail("get expected at least 1 argument, got 0");
      return {};
    }
    const Value* dflt = a.get(1, "default");
    if (k->is_string())
      if (const Value* v = d.find(k->as_string())) return *v;
    return dflt ? *dflt : Value::none();
  }
  List out;
  out.reserve(d.items.size());
  for (const auto& kv : d.items) {
    if (name == "items")
      out.push_back(Value::tuple({Value(kv.first), kv.second}));
    else if (name == "keys")
      out.emplace_back(kv.first);
    else
      out.push_back(kv.second);
  }
  return Value::list(std::move(out));
}

}  // namespace

Value call_method(const Value& self, const std::string& name, const CallArgs& args, Fault& fault) {
  if (self.is_string()) return string_method(self.as_string(), name, args, fault);
  if (self.is_dict()) return dict_method(self, name, args, fault);
  if (self.kind() == Value::Kind::Loop && name == "cycle") {
    if (args.pos.empty()) {
      fault.fail("no items for cycling given");
      return {};
    }
    return args.pos[self.as_loop().index0 % args.pos.size()];
  }
  fault.fail("'" + std::string(self.type_name()) + "' object has no method '" + name + "'");
  return {};
}

Value call_global(const std::string& name, const CallArgs& args, Fault& fault) {
  if (name == "raise_exception") {
    std::string msg = args.pos.empty() ? std::string() : args.pos[0].str();
    // The message reaches the client as the error: never leave it empty.
    fault.fail(msg.empty() ? "the chat template raised an error without a message" : msg, true);
    return {};
  }
  if (name == "strftime_now") {
    const Value* fmt = args.get(0, "format");
    if (!fmt || !fmt->is_string()) {
      fault.fail("strftime_now() needs a format string");
      return {};
    }
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[512];
    size_t n = std::strftime(buf, sizeof buf, fmt->as_string().c_str(), &tm);
    return Value(std::string(buf, n));
  }
  if (name == "namespace" || name == "dict") {
    Dict d;
    if (!args.pos.empty()) {
      if (args.pos.size() > 1 || !args.pos[0].is_dict()) {
        fault.fail(name + "() takes a single mapping argument");
        return {};
      }
      d = args.pos[0].as_dict();
    }
    for (const auto& kv : args.kw) d.set(kv.first, kv.second);
    if (name == "dict") return Value::dict(std::move(d));
    auto ns = std::make_shared<Namespace>();
    ns->attrs = std::move(d);
    return Value::ns(std::move(ns));
  }
  if (name == "range") {
    int64_t p[3] = {0, 0, 1};
    if (args.pos.empty() || args.pos.size() > 3 || !args.kw.empty()) {
      fault.fail("range expected 1 to 3 positional arguments");
      return {};
    }
    for (size_t i = 0; i < args.pos.size(); ++i) {
      if (!args.pos[i].is_int()) {
        fault.fail("'" + std::string(args.pos[i].type_name()) + "' object cannot be interpreted as an integer");
        return {};
      }
    }
    if (args.pos.size() == 1) {
      p[1] = args.pos[0].as_int();
    } else {
      p[0] = args.pos[0].as_int();
      p[1] = args.pos[1].as_int();
      if (args.pos.size() == 3) p[2] = args.pos[2].as_int();
    }
    if (p[2] == 0) {
      fault.fail("range() arg 3 must not be zero");
      return {};
    }
    List out;
    for (int64_t i = p[0]; p[2] > 0 ? i < p[1] : i > p[1]; i += p[2]) {
      if (static_cast<int64_t>(out.size()) >= kMaxRange) {
        fault.fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        return {};
      }
      out.emplace_back(i);
    }
    return Value::list(std::move(out));
  }
  fault.fail("unknown function '" + name + "'");
  return {};
}

}  // namespace reprox::tmpl
