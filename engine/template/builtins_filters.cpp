// Jinja2's built-in filters (the subset chat templates use) and the
// filter/test registries.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/template/builtins.hpp"
#include "engine/template/py_text.hpp"

namespace reprox::tmpl {
namespace {

const char* const kFilters[] = {
    "abs",     "capitalize", "count",      "d",       "default", "e",        "escape",     "first", "float",
    "indent",  "int",        "items",      "join",    "last",    "length",   "list",       "lower", "map",
    "max",     "min",        "reject",     "rejectattr", "replace", "reverse", "round",     "safe",  "select",
    "selectattr", "sort",    "string",     "sum",     "title",   "tojson",   "trim",       "unique", "upper",
    "wordcount", "dictsort"};
const char* const kTests[] = {"boolean", "callable", "defined", "divisibleby", "eq",     "equalto", "==",       "escaped",
                              "even",    "false",    "filter",  "float",       "ge",     ">=",      "gt",       "greaterthan",
                              ">",       "in",       "integer", "iterable",    "le",     "<=",      "lower",    "lt",
                              "lessthan", "<",       "mapping", "ne",          "!=",     "none",    "number",   "odd",
                              "sameas",  "sequence", "string",  "test",        "true",   "undefined", "upper"};

template <size_t N>
int index_of(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<int>(i);
  return -1;
}

template <size_t N>
std::string join_all(const char* const (&names)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::string(names[i]);
  return s;
}

bool is_filter(std::string_view f, const char* name) { return f == name; }

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// Jinja2's do_title: capitalize each word after a run of [-\s({[<].
std::string jinja_title(const std::string& s) {
  std::string out, word;
  auto flush = [&] {
    if (!word.empty()) out += py::capitalize(word);
    word.clear();
  };
  for (char32_t c : py::decode(s)) {
    bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::is_space(c);
    if (sep) {
      flush();
      py::append_utf8(out, c);
    } else {
      py::append_utf8(word, c);
    }
  }
  flush();
  return out;
}

std::string indent_text(const std::string& text, const std::string& pad, bool first, bool blank) {
  std::string s = text + "\n";
  std::vector<std::string> lines;
  {
    Value sv(s);
    CallArgs none;
    Fault ignore;
    Value l = call_method(sv, "splitlines", none, ignore);
    for (const auto& v : l.as_list()) lines.push_back(v.as_string());
  }
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + pad : "") + lines[i];
  } else if (!lines.empty()) {
    rv = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : pad) + lines[i];
  }
  if (first) rv = pad + rv;
  return rv;
}

bool parse_py_int(std::string s, int64_t* out) {
  s = py::strip(s, py::StripSide::Both);
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && isdigit(static_cast<unsigned char>(s[i - 1])) &&
        isdigit(static_cast<unsigned char>(s[i + 1])))
      continue;
    digits.push_back(s[i]);
  }
  if (digits.empty()) return false;
  size_t i = (digits[0] == '+' || digits[0] == '-') ? 1 : 0;
  if (i >= digits.size() || digits.find_first_not_of("0123456789", i) != std::string::npos) return false;
  errno = 0;
  long long v = std::strtoll(digits.c_str(), nullptr, 10);
  if (errno) return false;
  *out = v;
  return true;
}

bool parse_py_float(std::string s, double* out) {
  s = py::strip(s, py::StripSide::Both);
  if (s.empty()) return false;
  std::string low = py::lower(s);
  size_t sign = (low[0] == '+' || low[0] == '-') ? 1 : 0;
  std::string body = low.substr(sign);
  if (body == "inf" || body == "infinity" || body == "nan") {
    double v = body == "nan" ? NAN : INFINITY;
    *out = low[0] == '-' ? -v : v;
    return true;
  }
  if (body.empty() || body.find_first_not_of("0123456789.e+-_") != std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Sort/unique key: lower-cased string unless case-sensitive.
Value fold_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(py::lower(v.as_string()));
  return v;
}

// Dotted attribute lookup used by map/selectattr/sort/sum/join (Jinja2 make_attrgetter).
Value attr_path(const Value& item, const std::string& path, Fault& fault) {
  Value cur = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    cur = numeric ? get_item(cur, Value(static_cast<int64_t>(std::stoll(part))), fault) : get_item(cur, Value(part), fault);
    if (dot == std::string::npos || fault.set) return cur;
    start = dot + 1;
  }
}

Value to_list(const Value& v, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
  return Value::list(std::move(items));
}

bool arg_bool(const CallArgs& a, size_t i, const char* name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : dflt;
}

// select/reject/selectattr/rejectattr share this: test args start at `first_test_arg`.
Value select_items(const Value& seq, const CallArgs& a, bool by_attr, bool keep_on, Fault& fault) {
  List items;
  if (!iterate(seq, items, fault)) return {};
  size_t t = by_attr ? 1 : 0;
  std::string attr;
  if (by_attr) {
    if (a.pos.empty() || !a.pos[0].is_string()) {
      fault.fail("selectattr/rejectattr need an attribute name");
      return {};
    }
    attr = a.pos[0].as_string();
  }
  int test = -1;
  CallArgs targs;
  if (a.pos.size() > t) {
    if (!a.pos[t].is_string() || (test = find_test(a.pos[t].as_string())) < 0) {
      fault.fail("unsupported test '" + a.pos[t].str() + "' in select");
      return {};
    }
    targs.pos.assign(a.pos.begin() + t + 1, a.pos.end());
    targs.kw = a.kw;
  }
  List out;
  for (const auto& item : items) {
    Value subject = by_attr ? attr_path(item, attr, fault) : item;
    if (fault.set) return {};
    bool r = test < 0 ? subject.truthy() : apply_test(test, subject, targs, fault);
    if (fault.set) return {};
    if (r == keep_on) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value map_items(const Value& seq, const CallArgs& a, Fault& fault) {
  List items;
  if (!iterate(seq, items, fault)) return {};
  List out;
  out.reserve(items.size());
  if (a.pos.empty()) {
    const Value* attr = a.get(99, "attribute");
    if (!attr || !attr->is_string()) {
      fault.fail("map needs a filter name or attribute=");
      return {};
    }
    const Value* dflt = a.get(99, "default");
    for (const auto& item : items) {
      Value v = attr_path(item, attr->as_string(), fault);
      if (v.is_undefined() && dflt) v = *dflt;
      out.push_back(std::move(v));
    }
    return Value::list(std::move(out));
  }
  int f = a.pos[0].is_string() ? find_filter(a.pos[0].as_string()) : -1;
  if (f < 0) {
    fault.fail("unsupported filter '" + a.pos[0].str() + "' in map");
    return {};
  }
  CallArgs fargs;
  fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
  fargs.kw = a.kw;
  for (const auto& item : items) out.push_back(apply_filter(f, item, fargs, fault));
  return Value::list(std::move(out));
}

Value sorted(const Value& seq, const CallArgs& a, Fault& fault) {
  List items;
  if (!iterate(seq, items, fault)) return {};
  bool reverse = arg_bool(a, 0, "reverse", false);
  bool cs = arg_bool(a, 1, "case_sensitive", false);
  const Value* attr = a.get(2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& it : items) {
    Value k = attr && attr->is_string() ? attr_path(it, attr->as_string(), fault) : it;
    keyed.emplace_back(fold_case(k, cs), std::move(it));
  }
  bool ok = true;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    bool o;
    bool r = reverse ? py_less(y.first, x.first, &o) : py_less(x.first, y.first, &o);
    ok = ok && o;
    return r;
  });
  if (!ok) {
    fault.fail("'<' not supported between the items being sorted");
    return {};
  }
  List out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::list(std::move(out));
}

Value tojson(const Value& v, const CallArgs& a, Fault& fault) {
  const Value* indent_v = a.get(1, "indent");
  const Value* seps = a.get(2, "separators");
  const Value* ascii = a.get(0, "ensure_ascii");
  if (ascii && ascii->truthy()) {
    fault.fail("unsupported: tojson(ensure_ascii=True)");
    return {};
  }
  int indent = -1;
  if (indent_v && !indent_v->is_none()) {
    if (!indent_v->is_int()) {
      fault.fail("unsupported: tojson indent that is not an integer");
      return {};
    }
    indent = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(indent_v->as_int(), 64)));
  }
  std::string item_sep = indent >= 0 ? "," : ", ", key_sep = ": ";
  if (seps && !seps->is_none()) {
    if (!seps->is_sequence() || seps->as_list().size() != 2 || !seps->as_list()[0].is_string() ||
        !seps->as_list()[1].is_string()) {
      fault.fail("tojson separators must be a pair of strings");
      return {};
    }
    item_sep = seps->as_list()[0].as_string();
    key_sep = seps->as_list()[1].as_string();
  }
  std::string out;
  if (!to_json(v, out, indent, arg_bool(a, 3, "sort_keys", false), item_sep, key_sep, fault)) return {};
  return Value(std::move(out));
}

}  // namespace

int find_filter(std::string_view name) { return index_of(kFilters, name); }
int find_test(std::string_view name) { return index_of(kTests, name); }
std::string supported_filters() { return join_all(kFilters); }
std::string supported_tests() { return join_all(kTests); }

Value apply_filter(int id, const Value& v, const CallArgs& a, Fault& fault) {
  std::string_view f = kFilters[id];
  if (is_filter(f, "default") || is_filter(f, "d")) {
    const Value* dflt = a.get(0, "default_value");
    bool boolean = arg_bool(a, 1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return dflt ? *dflt : Value("");
    return v;
  }
  if (is_filter(f, "tojson")) return tojson(v, a, fault);
  if (is_filter(f, "length") || is_filter(f, "count")) {
    int64_t n;
    return length_of(v, n, fault) ? Value(n) : Value();
  }
  if (is_filter(f, "string")) return Value(v.str());
  if (is_filter(f, "safe")) return Value(v.str());
  if (is_filter(f, "e") || is_filter(f, "escape")) return Value(html_escape(v.str()));
  if (is_filter(f, "trim")) {
    const Value* chars = a.get(0, "chars");
    std::string c = chars && chars->is_string() ? chars->as_string() : "";
    return Value(py::strip(v.str(), py::StripSide::Both, chars && chars->is_string() ? &c : nullptr));
  }
  if (is_filter(f, "upper")) return Value(py::upper(v.str()));
  if (is_filter(f, "lower")) return Value(py::lower(v.str()));
  if (is_filter(f, "capitalize")) return Value(py::capitalize(v.str()));
  if (is_filter(f, "title")) return Value(jinja_title(v.str()));
  if (is_filter(f, "replace")) {
    const Value* o = a.get(0, "old");
    const Value* w = a.get(1, "new");
    const Value* c = a.get(2, "count");
    if (!o || !w) {
      fault.fail("replace needs old and new");
      return {};
    }
    int64_t count = c && c->is_int() ? c->as_int() : -1;
    return Value(py::replace(v.str(), o->str(), w->str(), count));
  }
  if (is_filter(f, "indent")) {
    const Value* w = a.get(0, "width");
    std::string pad = w && w->is_string() ? w->as_string() : std::string(w && w->is_int() ? std::max<int64_t>(0, w->as_int()) : 4, ' ');
    return Value(indent_text(v.str(), pad, arg_bool(a, 1, "first", false), arg_bool(a, 2, "blank", false)));
  }
  if (is_filter(f, "wordcount")) {
    std::string none;
    return Value(static_cast<int64_t>(py::split(v.str(), nullptr, -1).size()));
  }
  if (is_filter(f, "int")) {
    const Value* dflt = a.get(0, "default");
    Value d = dflt ? *dflt : Value(int64_t{0});
    if (v.is_int()) return Value(v.as_int());
    if (v.kind() == Value::Kind::Float) {
      double x = v.as_double();
      return std::isfinite(x) && std::fabs(x) < 9.2e18 ? Value(static_cast<int64_t>(x)) : d;
    }
    if (v.is_string()) {
      int64_t i;
      if (parse_py_int(v.as_string(), &i)) return Value(i);
      double x;
      if (parse_py_float(v.as_string(), &x) && std::isfinite(x) && std::fabs(x) < 9.2e18) return Value(static_cast<int64_t>(x));
    }
    return d;
  }
  if (is_filter(f, "float")) {
    const Value* dflt = a.get(0, "default");
    Value d = dflt ? *dflt : Value(0.0);
    if (v.is_number()) return Value(v.as_double());
    double x;
    if (v.is_string() && parse_py_float(v.as_string(), &x)) return Value(x);
    return d;
  }
  if (is_filter(f, "abs")) {
    if (!v.is_number()) {
      fault.fail(std::string("bad operand type for abs(): '") + v.type_name() + "'");
      return {};
    }
    return v.kind() == Value::Kind::Float ? Value(std::fabs(v.as_double())) : Value(static_cast<int64_t>(std::llabs(v.as_int())));
  }
  if (is_filter(f, "round")) {
    if (!v.is_number()) {
      fault.fail("round filter needs a number");
      return {};
    }
    const Value* p = a.get(0, "precision");
    const Value* m = a.get(1, "method");
    std::string method = m && m->is_string() ? m->as_string() : "common";
    double scale = std::pow(10.0, p && p->is_int() ? static_cast<double>(p->as_int()) : 0.0);
    double x = v.as_double() * scale;
    double r = method == "floor" ? std::floor(x) : method == "ceil" ? std::ceil(x) : std::nearbyint(x);
    return Value(r / scale);
  }
  if (is_filter(f, "join")) {
    List items;
    if (!iterate(v, items, fault)) return {};
    const Value* sep = a.get(0, "d");
    const Value* attr = a.get(1, "attribute");
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i && sep) sep->append_str(s);
      (attr && attr->is_string() ? attr_path(items[i], attr->as_string(), fault) : items[i]).append_str(s);
    }
    return Value(std::move(s));
  }
  if (is_filter(f, "first") || is_filter(f, "last")) {
    List items;
    if (!iterate(v, items, fault)) return {};
    if (items.empty()) return Value::undefined(std::string("No ") + (f == "first" ? "first" : "last") + " item, sequence was empty.");
    return f == "first" ? items.front() : items.back();
  }
  if (is_filter(f, "list")) return to_list(v, fault);
  if (is_filter(f, "reverse")) {
    if (v.is_string()) {
      auto cps = py::decode(v.as_string());
      std::reverse(cps.begin(), cps.end());
      return Value(py::encode(cps));
    }
    List items;
    if (!iterate(v, items, fault)) return {};
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (is_filter(f, "items")) {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict()) {
      fault.fail("Can only get item pairs from a mapping.");
      return {};
    }
    return call_method(v, "items", CallArgs{}, fault);
  }
  if (is_filter(f, "dictsort")) {
    if (!v.is_dict()) {
      fault.fail("dictsort needs a mapping");
      return {};
    }
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    const Value* by = a.get(1, "by");
    bool by_value = by && by->is_string() && by->as_string() == "value";
    bool reverse = arg_bool(a, 2, "reverse", false);
    List pairs = call_method(v, "items", CallArgs{}, fault).as_list();
    bool ok = true;
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
      Value kx = fold_case(x.as_list()[by_value ? 1 : 0], cs), ky = fold_case(y.as_list()[by_value ? 1 : 0], cs);
      bool o;
      bool r = reverse ? py_less(ky, kx, &o) : py_less(kx, ky, &o);
      ok = ok && o;
      return r;
    });
    if (!ok) fault.fail("dictsort: values do not order");
    return Value::list(std::move(pairs));
  }
  if (is_filter(f, "map")) return map_items(v, a, fault);
  if (is_filter(f, "select")) return select_items(v, a, false, true, fault);
  if (is_filter(f, "reject")) return select_items(v, a, false, false, fault);
  if (is_filter(f, "selectattr")) return select_items(v, a, true, true, fault);
  if (is_filter(f, "rejectattr")) return select_items(v, a, true, false, fault);
  if (is_filter(f, "sort")) return sorted(v, a, fault);
  if (is_filter(f, "unique")) {
    List items;
    if (!iterate(v, items, fault)) return {};
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    const Value* attr = a.get(1, "attribute");
    List out, seen;
    for (auto& it : items) {
      Value key = fold_case(attr && attr->is_string() ? attr_path(it, attr->as_string(), fault) : it, cs);
      bool dup = false;
      for (const auto& s : seen) dup = dup || py_equal(s, key);
      if (dup) continue;
      seen.push_back(std::move(key));
      out.push_back(std::move(it));
    }
    return Value::list(std::move(out));
  }
  if (is_filter(f, "min") || is_filter(f, "max") || is_filter(f, "sum")) {
    List items;
    if (!iterate(v, items, fault)) return {};
    if (f == "sum") {
      const Value* attr = a.get(0, "attribute");
      const Value* start = a.get(1, "start");
      Value total = start ? *start : Value(int64_t{0});
      for (const auto& it : items) {
        Value x = attr && attr->is_string() ? attr_path(it, attr->as_string(), fault) : it;
        if (!x.is_number() || !total.is_number()) {
          fault.fail("sum filter supports numbers only");
          return {};
        }
        total = total.kind() == Value::Kind::Float || x.kind() == Value::Kind::Float
                    ? Value(total.as_double() + x.as_double())
                    : Value(total.as_int() + x.as_int());
      }
      return total;
    }
    if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    const Value* attr = a.get(1, "attribute");
    size_t best = 0;
    for (size_t i = 1; i < items.size(); ++i) {
      auto key = [&](const Value& x) {
        return fold_case(attr && attr->is_string() ? attr_path(x, attr->as_string(), fault) : x, cs);
      };
      bool ok;
      bool better = f == "min" ? py_less(key(items[i]), key(items[best]), &ok) : py_less(key(items[best]), key(items[i]), &ok);
      if (!ok) {
        fault.fail("min/max: values do not order");
        return {};
      }
      if (better) best = i;
    }
    return items[best];
  }
  fault.fail("filter '" + std::string(f) + "' is not implemented");
  return {};
}

bool apply_test(int id, const Value& v, const CallArgs& a, Fault& fault) {
  std::string_view t = kTests[id];
  using K = Value::Kind;
  auto arg0 = [&]() -> const Value* {
    const Value* x = a.get(0, "value");
    if (!x) x = a.get(0, "other");
    if (!x) fault.fail("test '" + std::string(t) + "' needs an argument");
    return x;
  };
  if (t == "defined") return !v.is_undefined();
  if (t == "undefined") return v.is_undefined();
  if (t == "none") return v.is_none();
  if (t == "string") return v.is_string();
  if (t == "mapping") return v.is_dict();
  if (t == "number") return v.is_number();
  if (t == "integer") return v.kind() == K::Int;
  if (t == "float") return v.kind() == K::Float;
  if (t == "boolean") return v.kind() == K::Bool;
  if (t == "true") return v.kind() == K::Bool && v.as_bool();
  if (t == "false") return v.kind() == K::Bool && !v.as_bool();
  if (t == "callable") return v.kind() == K::Callable;
  if (t == "escaped") return false;
  if (t == "sequence") return v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict();
  if (t == "iterable") return v.is_undefined() || v.is_string() || v.is_sequence() || v.is_dict();
  if (t == "lower" || t == "upper") {
    if (!v.is_string()) return false;
    return call_method(v, t == "lower" ? "islower" : "isupper", CallArgs{}, fault).truthy();
  }
  if (t == "filter") return arg0() && arg0()->is_string() && find_filter(arg0()->as_string()) >= 0;
  if (t == "test") return arg0() && arg0()->is_string() && find_test(arg0()->as_string()) >= 0;
  if (t == "even" || t == "odd" || t == "divisibleby") {
    int64_t n = 2;
    if (t == "divisibleby") {
      const Value* d = arg0();
      if (!d) return false;
      if (!d->is_int() || d->as_int() == 0) {
        fault.fail("divisibleby needs a non-zero integer");
        return false;
      }
      n = d->as_int();
    }
    if (v.is_undefined()) {
      fault.fail(v.undefined_hint());
      return false;
    }
    if (!v.is_number()) {
      fault.fail(std::string("unsupported operand type(s) for %: '") + v.type_name() + "' and 'int'");
      return false;
    }
    double r = v.kind() == K::Float ? std::fmod(v.as_double(), static_cast<double>(n)) : static_cast<double>(v.as_int() % n);
    return t == "odd" ? r != 0 : r == 0;
  }
  const Value* o = arg0();
  if (!o) return false;
  if (t == "eq" || t == "equalto" || t == "==") return py_equal(v, *o);
  if (t == "ne" || t == "!=") return !py_equal(v, *o);
  if (t == "in") return contains(*o, v, fault);
  if (t == "sameas") {
    if (v.kind() != o->kind()) return false;
    if (v.is_none() || v.is_undefined()) return true;
    if (v.kind() == K::Bool || v.kind() == K::Int) return v.as_int() == o->as_int();
    return false;
  }
  bool ok;
  bool r;
  if (t == "lt" || t == "lessthan" || t == "<") {
    r = py_less(v, *o, &ok);
  } else if (t == "gt" || t == "greaterthan" || t == ">") {
    r = py_less(*o, v, &ok);
  } else if (t == "le" || t == "<=") {
    r = !py_less(*o, v, &ok);
  } else {
    r = !py_less(v, *o, &ok);
  }
  if (!ok) fault.fail("'" + std::string(t) + "' not supported between instances of '" + v.type_name() + "' and '" + o->type_name() + "'");
  return r;
}

}  // namespace reprox::tmpl
