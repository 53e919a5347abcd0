// Jinja2's built-in filters (the subset chat templates use): the sequence
// filters, the filter registry binding names to implementations, and the
// tests with their registry.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "engine/template/builtins.hpp"
#include "engine/template/builtins_filters.hpp"
#include "engine/template/py_text.hpp"

namespace reprox::tmpl {
namespace {

using filters::arg_bool;

struct FilterEntry {
  const char* name;
  filters::FilterFn fn;
};

const char* const kTests[] = {"boolean", "callable", "defined", "divisibleby", "eq",     "equalto", "==",       "escaped",
                              "even",    "false",    "filter",  "float",       "ge",     ">=",      "gt",       "greaterthan",
                              ">",       "in",       "integer", "iterable",    "le",     "<=",      "lower",    "lt",
                              "lessthan", "<",       "mapping", "ne",          "!=",     "none",    "number",   "odd",
                              "sameas",  "sequence", "string",  "test",        "true",   "undefined", "upper"};

const char* name_of(const char* name) { return name; }
const char* name_of(const FilterEntry& entry) { return entry.name; }

template <typename T, size_t N>
int index_of(const T (&table)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == name_of(table[i])) return static_cast<int>(i);
  return -1;
}

template <typename T, size_t N>
std::string join_all(const T (&table)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::string(name_of(table[i]));
  return s;
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
    // A number past int64 stays a string key: no item has it (Jinja2: no such index).
    int64_t index = 0;
    bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
                   std::from_chars(part.data(), part.data() + part.size(), index).ec == std::errc();
    cur = numeric ? get_item(cur, Value(index), fault) : get_item(cur, Value(part), fault);
    if (dot == std::string::npos || fault.set) return cur;
    start = dot + 1;
  }
}

Value to_list(const Value& v, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
  return Value::list(std::move(items));
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

// ---- sequence filters (string and number ones: builtins_filters_text.cpp) ----

Value do_join(const Value& v, const CallArgs& a, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
  const Value* sep = a.get(0, "d");
  const Value* attr = a.get(1, "attribute");
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i && sep) sep->append_str(s);
    (attr && attr->is_string() ? attr_path(items[i], attr->as_string(), fault) : items[i]).append_str(s);
    if (s.size() > kMaxBuiltinBytes) {
      fault.fail("join result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)");
      return {};
    }
  }
  return Value(std::move(s));
}

// first/last: Undefined (with Jinja2's hint) for an empty sequence.
Value first_or_last(const Value& v, bool first, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
  if (items.empty())
    return Value::undefined(std::string("No ") + (first ? "first" : "last") + " item, sequence was empty.");
  return first ? items.front() : items.back();
}

Value do_first(const Value& v, const CallArgs&, Fault& fault) { return first_or_last(v, true, fault); }
Value do_last(const Value& v, const CallArgs&, Fault& fault) { return first_or_last(v, false, fault); }
Value do_list(const Value& v, const CallArgs&, Fault& fault) { return to_list(v, fault); }

// Strings reverse by code point; other iterables as lists.
Value do_reverse(const Value& v, const CallArgs&, Fault& fault) {
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

Value do_items(const Value& v, const CallArgs&, Fault& fault) {
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict()) {
    fault.fail("Can only get item pairs from a mapping.");
    return {};
  }
  return call_method(v, "items", CallArgs{}, fault);
}

Value do_dictsort(const Value& v, const CallArgs& a, Fault& fault) {
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

Value do_map(const Value& v, const CallArgs& a, Fault& fault) { return map_items(v, a, fault); }
Value do_select(const Value& v, const CallArgs& a, Fault& fault) { return select_items(v, a, false, true, fault); }
Value do_reject(const Value& v, const CallArgs& a, Fault& fault) { return select_items(v, a, false, false, fault); }
Value do_selectattr(const Value& v, const CallArgs& a, Fault& fault) { return select_items(v, a, true, true, fault); }
Value do_rejectattr(const Value& v, const CallArgs& a, Fault& fault) { return select_items(v, a, true, false, fault); }
Value do_sort(const Value& v, const CallArgs& a, Fault& fault) { return sorted(v, a, fault); }

// Keeps the first item of each key (case-folded unless case_sensitive).
Value do_unique(const Value& v, const CallArgs& a, Fault& fault) {
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

// min/max: the first smallest (largest) item; Undefined for an empty sequence.
Value min_or_max(const Value& v, const CallArgs& a, bool want_min, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  bool cs = arg_bool(a, 0, "case_sensitive", false);
  const Value* attr = a.get(1, "attribute");
  auto key = [&](const Value& x) {
    return fold_case(attr && attr->is_string() ? attr_path(x, attr->as_string(), fault) : x, cs);
  };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    bool ok;
    bool better = want_min ? py_less(key(items[i]), key(items[best]), &ok) : py_less(key(items[best]), key(items[i]), &ok);
    if (!ok) {
      fault.fail("min/max: values do not order");
      return {};
    }
    if (better) best = i;
  }
  return items[best];
}

Value do_min(const Value& v, const CallArgs& a, Fault& fault) { return min_or_max(v, a, true, fault); }
Value do_max(const Value& v, const CallArgs& a, Fault& fault) { return min_or_max(v, a, false, fault); }

Value do_sum(const Value& v, const CallArgs& a, Fault& fault) {
  List items;
  if (!iterate(v, items, fault)) return {};
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

// The filters by name; find_filter's index is a position in this table, and
// its order is the one supported_filters() lists.
const FilterEntry kFilters[] = {
    {"abs", filters::do_abs},         {"capitalize", filters::do_capitalize}, {"count", filters::do_length},
    {"d", filters::do_default},       {"default", filters::do_default},       {"e", filters::do_escape},
    {"escape", filters::do_escape},   {"first", do_first},                    {"float", filters::do_float},
    {"indent", filters::do_indent},   {"int", filters::do_int},               {"items", do_items},
    {"join", do_join},                {"last", do_last},                      {"length", filters::do_length},
    {"list", do_list},                {"lower", filters::do_lower},           {"map", do_map},
    {"max", do_max},                  {"min", do_min},                        {"reject", do_reject},
    {"rejectattr", do_rejectattr},    {"replace", filters::do_replace},       {"reverse", do_reverse},
    {"round", filters::do_round},     {"safe", filters::do_string},           {"select", do_select},
    {"selectattr", do_selectattr},    {"sort", do_sort},                      {"string", filters::do_string},
    {"sum", do_sum},                  {"title", filters::do_title},           {"tojson", filters::do_tojson},
    {"trim", filters::do_trim},       {"unique", do_unique},                  {"upper", filters::do_upper},
    {"wordcount", filters::do_wordcount}, {"dictsort", do_dictsort}};

}  // namespace

int find_filter(std::string_view name) { return index_of(kFilters, name); }
int find_test(std::string_view name) { return index_of(kTests, name); }
std::string supported_filters() { return join_all(kFilters); }
std::string supported_tests() { return join_all(kTests); }

Value apply_filter(int id, const Value& v, const CallArgs& a, Fault& fault) { return kFilters[id].fn(v, a, fault); }

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
