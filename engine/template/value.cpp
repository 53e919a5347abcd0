#include "engine/template/value.hpp"

#include <algorithm>
#include <cmath>

#include "engine/template/py_text.hpp"

namespace reprox::tmpl {

const Value* Dict::find(std::string_view key) const {
  for (const auto& kv : items)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

void Dict::set(std::string_view key, Value v) {
  for (auto& kv : items)
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  items.emplace_back(std::string(key), std::move(v));
}

template <typename It, typename Get>
void Value::take_members(It begin, It end, Get get) {
  uint32_t deepest = 0;
  for (It it = begin; it != end; ++it) {
    const Value& member = get(*it);
    deepest = std::max(deepest, member.nesting_);
    holds_state_ = holds_state_ || member.holds_state_;
  }
  nesting_ = deepest + 1;
}

Value Value::list(List items) {
  Value v(Kind::List, std::make_shared<const List>(std::move(items)));
  const List& l = v.as_list();
  v.take_members(l.begin(), l.end(), [](const Value& m) -> const Value& { return m; });
  return v;
}

Value Value::tuple(List items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::Tuple;
  return v;
}

Value Value::dict(Dict d) {
  Value v(Kind::Dict, std::make_shared<const Dict>(std::move(d)));
  const auto& items = v.as_dict().items;
  v.take_members(items.begin(), items.end(), [](const auto& kv) -> const Value& { return kv.second; });
  return v;
}

Value Value::ns(std::shared_ptr<Namespace> n) {
  Value v(Kind::Namespace, std::move(n));
  const auto& items = v.as_namespace().attrs.items;
  v.take_members(items.begin(), items.end(), [](const auto& kv) -> const Value& { return kv.second; });
  v.holds_state_ = true;
  return v;
}

Value Value::callable(Callable c) {
  Value v(Kind::Callable, std::make_shared<const Callable>(std::move(c)));
  if (const auto& self = v.as_callable().self) {
    v.nesting_ = self->nesting_ + 1;
    v.holds_state_ = self->holds_state_;
  }
  return v;
}

Value Value::loop(std::shared_ptr<LoopState> l) {
  Value v(Kind::Loop, std::move(l));
  v.holds_state_ = true;
  return v;
}

Value Value::from_json(const json::Value& j) {
  switch (j.type()) {
    case json::Value::Type::Null: return none();
    case json::Value::Type::Bool: return Value(j.as_bool());
    case json::Value::Type::Int: return Value(j.as_int());
    case json::Value::Type::Uint: {
      uint64_t u = j.as_uint();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));  // beyond int64: no bignums here
    }
    case json::Value::Type::Double: return Value(j.as_double());
    case json::Value::Type::String: return Value(j.as_string());
    case json::Value::Type::Array: {
      List items;
      items.reserve(j.as_array().size());
      for (const auto& e : j.as_array()) items.push_back(from_json(e));
      return list(std::move(items));
    }
    case json::Value::Type::Object: {
      Dict d;
      d.items.reserve(j.as_object().size());
      for (const auto& kv : j.as_object()) d.items.emplace_back(kv.first, from_json(kv.second));
      return dict(std::move(d));
    }
  }
  return {};
}

std::string Value::undefined_hint() const {
  if (auto p = std::get_if<StrPtr>(&data_)) return **p;
  return "value is undefined";
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_double() != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::List:
    case Kind::Tuple: return !as_list().empty();
    case Kind::Dict: return !as_dict().items.empty();
    default: return true;
  }
}

const char* Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    case Kind::Namespace: return "Namespace";
    case Kind::Callable: return "function";
    case Kind::Loop: return "LoopContext";
  }
  return "object";
}

void Value::append_str(std::string& out) const {
  switch (kind_) {
    case Kind::Undefined: return;
    case Kind::String: out += as_string(); return;
    default: append_repr(out);
  }
}

std::string Value::str() const {
  if (kind_ == Kind::String) return as_string();
  std::string s;
  append_str(s);
  return s;
}

void Value::append_repr(std::string& out) const {
  switch (kind_) {
    case Kind::Undefined: return;
    case Kind::None: out += "None"; return;
    case Kind::Bool: out += as_bool() ? "True" : "False"; return;
    case Kind::Int: out += std::to_string(as_int()); return;
    case Kind::Float: py::append_float_repr(out, as_double()); return;
    case Kind::String: py::append_str_repr(out, as_string()); return;
    case Kind::List:
    case Kind::Tuple: {
      bool tuple = kind_ == Kind::Tuple;
      out.push_back(tuple ? '(' : '[');
      const auto& l = as_list();
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += ", ";
        l[i].append_repr(out);
      }
      if (tuple && l.size() == 1) out.push_back(',');
      out.push_back(tuple ? ')' : ']');
      return;
    }
    case Kind::Dict:
    case Kind::Namespace: {
      const Dict& d = kind_ == Kind::Dict ? as_dict() : as_namespace().attrs;
      if (kind_ == Kind::Namespace) out += "<Namespace ";
      out.push_back('{');
      bool first = true;
      for (const auto& kv : d.items) {
        if (!first) out += ", ";
        first = false;
        py::append_str_repr(out, kv.first);
        out += ": ";
        kv.second.append_repr(out);
      }
      out.push_back('}');
      if (kind_ == Kind::Namespace) out.push_back('>');
      return;
    }
    case Kind::Callable: out += "<function " + as_callable().name + ">"; return;
    case Kind::Loop: out += "<LoopContext>"; return;
  }
}

bool py_equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == K::Float || b.kind() == K::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.is_sequence() && b.is_sequence()) {
    if (a.kind() != b.kind()) return false;
    const auto &x = a.as_list(), &y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!py_equal(x[i], y[i])) return false;
    return true;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.as_string() == b.as_string();
    case K::Dict: {
      const auto &x = a.as_dict(), &y = b.as_dict();
      if (x.items.size() != y.items.size()) return false;
      for (const auto& kv : x.items) {
        const Value* o = y.find(kv.first);
        if (!o || !py_equal(kv.second, *o)) return false;
      }
      return true;
    }
    case K::Namespace: return &a.as_namespace() == &b.as_namespace();
    case K::Loop: return &a.as_loop() == &b.as_loop();
    case K::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

bool py_less(const Value& a, const Value& b, bool* ok) {
  *ok = true;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order == code point order
  if (a.is_sequence() && b.is_sequence() && a.kind() == b.kind()) {
    const auto &x = a.as_list(), &y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (py_equal(x[i], y[i])) continue;
      return py_less(x[i], y[i], ok);
    }
    return x.size() < y.size();
  }
  *ok = false;
  return false;
}

}  // namespace reprox::tmpl
