// Jinja2's string and number filters (the subset chat templates use).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/template/builtins_filters.hpp"
#include "engine/template/py_text.hpp"

namespace reprox::tmpl::filters {
namespace {

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

// Python's int(str): optional sign, digits with single `_` between digits.
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

// Python's float(str), including inf/infinity/nan in any case.
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

// Truncation toward zero, as int(float); false when x does not fit int64.
bool float_to_int(double x, int64_t* out) {
  if (!std::isfinite(x) || std::fabs(x) >= 9.2e18) return false;
  *out = static_cast<int64_t>(x);
  return true;
}

}  // namespace

Value do_default(const Value& v, const CallArgs& a, Fault&) {
  const Value* dflt = a.get(0, "default_value");
  bool boolean = arg_bool(a, 1, "boolean", false);
  if (v.is_undefined() || (boolean && !v.truthy())) return dflt ? *dflt : Value("");
  return v;
}

Value do_tojson(const Value& v, const CallArgs& a, Fault& fault) {
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

Value do_length(const Value& v, const CallArgs&, Fault& fault) {
  int64_t n;
  return length_of(v, n, fault) ? Value(n) : Value();
}

Value do_string(const Value& v, const CallArgs&, Fault&) { return Value(v.str()); }
Value do_escape(const Value& v, const CallArgs&, Fault&) { return Value(html_escape(v.str())); }

Value do_trim(const Value& v, const CallArgs& a, Fault&) {
  const Value* chars = a.get(0, "chars");
  std::string c = chars && chars->is_string() ? chars->as_string() : "";
  return Value(py::strip(v.str(), py::StripSide::Both, chars && chars->is_string() ? &c : nullptr));
}

Value do_upper(const Value& v, const CallArgs&, Fault&) { return Value(py::upper(v.str())); }
Value do_lower(const Value& v, const CallArgs&, Fault&) { return Value(py::lower(v.str())); }
Value do_capitalize(const Value& v, const CallArgs&, Fault&) { return Value(py::capitalize(v.str())); }
Value do_title(const Value& v, const CallArgs&, Fault&) { return Value(jinja_title(v.str())); }

Value do_replace(const Value& v, const CallArgs& a, Fault& fault) {
  const Value* o = a.get(0, "old");
  const Value* w = a.get(1, "new");
  const Value* c = a.get(2, "count");
  if (!o || !w) {
    fault.fail("replace needs old and new");
    return {};
  }
  int64_t count = c && c->is_int() ? c->as_int() : -1;
  std::string out;
  if (!bounded_replace(v.str(), o->str(), w->str(), count, out, fault)) return {};
  return Value(std::move(out));
}

Value do_indent(const Value& v, const CallArgs& a, Fault& fault) {
  const Value* w = a.get(0, "width");
  const std::string text = v.str();
  // The pad goes before each line at most: refuse before building it.
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 2;
  size_t width = 4;
  if (w && w->is_string()) width = w->as_string().size();
  if (w && w->is_int()) width = static_cast<size_t>(std::max<int64_t>(0, w->as_int()));
  if (width > 0 && (width > kMaxBuiltinBytes / lines || text.size() + width * lines > kMaxBuiltinBytes)) {
    fault.fail("indent result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)");
    return {};
  }
  std::string pad = w && w->is_string() ? w->as_string() : std::string(width, ' ');
  return Value(indent_text(text, pad, arg_bool(a, 1, "first", false), arg_bool(a, 2, "blank", false)));
}

Value do_wordcount(const Value& v, const CallArgs&, Fault&) {
  return Value(static_cast<int64_t>(py::split(v.str(), nullptr, -1).size()));
}

// int(): ints as they are, floats truncated, strings parsed as int, else
// as float; `default` (0) for whatever does not convert.
Value do_int(const Value& v, const CallArgs& a, Fault&) {
  const Value* dflt = a.get(0, "default");
  Value d = dflt ? *dflt : Value(int64_t{0});
  if (v.is_int()) return Value(v.as_int());
  int64_t i;
  if (v.kind() == Value::Kind::Float) return float_to_int(v.as_double(), &i) ? Value(i) : d;
  if (v.is_string()) {
    if (parse_py_int(v.as_string(), &i)) return Value(i);
    double x;
    if (parse_py_float(v.as_string(), &x) && float_to_int(x, &i)) return Value(i);
  }
  return d;
}

Value do_float(const Value& v, const CallArgs& a, Fault&) {
  const Value* dflt = a.get(0, "default");
  Value d = dflt ? *dflt : Value(0.0);
  if (v.is_number()) return Value(v.as_double());
  double x;
  if (v.is_string() && parse_py_float(v.as_string(), &x)) return Value(x);
  return d;
}

Value do_abs(const Value& v, const CallArgs&, Fault& fault) {
  if (!v.is_number()) {
    fault.fail(std::string("bad operand type for abs(): '") + v.type_name() + "'");
    return {};
  }
  return v.kind() == Value::Kind::Float ? Value(std::fabs(v.as_double()))
                                        : Value(static_cast<int64_t>(std::llabs(v.as_int())));
}

Value do_round(const Value& v, const CallArgs& a, Fault& fault) {
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

}  // namespace reprox::tmpl::filters
