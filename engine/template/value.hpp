// Runtime values of the template interpreter, modelled on the Python objects
// Jinja2 sees when Hugging Face renders a chat template: None, bool, int,
// float, str, list, tuple, dict (insertion-ordered), namespace, callables,
// the loop object, and Jinja2's default Undefined.
// Lists, tuples and dicts are immutable once built (the sandbox forbids
// mutation) and shared by pointer; a namespace is shared and mutable.
// Every value knows how deeply containers nest in it (nesting()) and whether
// it reaches shared mutable state (holds_state(): a namespace, a loop, or a
// method bound to either), so the evaluator can bound nesting and refuse
// the assignments that would make a reference cycle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/json.hpp"

namespace reprox::tmpl {

class Value;
using List = std::vector<Value>;

struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(std::string_view key) const;
  void set(std::string_view key, Value v);
};

struct Namespace {
  Dict attrs;
};

struct MacroDef;  // ast.hpp
struct LoopState;

// Something `name(...)` can invoke: a global function, a bound method of a
// value (`s.strip`, `d.items`, `loop.cycle`) or a macro.
struct Callable {
  enum class Type { Global, Method, Macro };
  Type type;
  std::string name;
  std::shared_ptr<const Value> self;  // bound object for Method
  const MacroDef* macro = nullptr;    // owned by the compiled template
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Tuple, Dict, Namespace, Callable, Loop };

  Value() = default;  // Undefined
  // hint: the UndefinedError message using it would raise, e.g. "'x' is undefined".
  static Value undefined(std::string hint) {
    Value v;
    v.data_ = std::make_shared<const std::string>(std::move(hint));
    return v;
  }
  static Value none() { return Value(Kind::None, std::monostate{}); }
  Value(bool b) : kind_(Kind::Bool), data_(b) {}
  Value(int i) : kind_(Kind::Int), data_(int64_t{i}) {}
  Value(int64_t i) : kind_(Kind::Int), data_(i) {}
  Value(double d) : kind_(Kind::Float), data_(d) {}
  Value(std::string s) : kind_(Kind::String), data_(std::make_shared<const std::string>(std::move(s))) {}
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  static Value list(List items);
  static Value tuple(List items);
  static Value dict(Dict d);
  static Value ns(std::shared_ptr<Namespace> n);
  static Value callable(Callable c);
  static Value loop(std::shared_ptr<LoopState> l);
  static Value from_json(const json::Value& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_int() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }  // Python: bool is an int
  bool is_number() const { return is_int() || kind_ == Kind::Float; }
  bool is_sequence() const { return kind_ == Kind::List || kind_ == Kind::Tuple; }
  bool is_dict() const { return kind_ == Kind::Dict; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return kind_ == Kind::Bool ? int64_t{as_bool()} : std::get<int64_t>(data_); }
  double as_double() const { return kind_ == Kind::Float ? std::get<double>(data_) : static_cast<double>(as_int()); }
  const std::string& as_string() const { return *std::get<StrPtr>(data_); }
  const List& as_list() const { return *std::get<ListPtr>(data_); }
  const Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  Namespace& as_namespace() const { return *std::get<NsPtr>(data_); }
  const Callable& as_callable() const { return *std::get<CallPtr>(data_); }
  LoopState& as_loop() const { return *std::get<LoopPtr>(data_); }
  // The hint an Undefined was made with ("value is undefined" when none).
  std::string undefined_hint() const;

  bool truthy() const;
  // Python str(): what `{{ v }}` and `~` print.
  void append_str(std::string& out) const;
  std::string str() const;
  // Python repr(), used inside printed lists and dicts.
  void append_repr(std::string& out) const;
  const char* type_name() const;

  // Containers on the deepest path: 0 for scalars, 1 for a flat list.
  uint32_t nesting() const { return nesting_; }
  bool holds_state() const { return holds_state_; }

 private:
  using StrPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const List>;
  using DictPtr = std::shared_ptr<const Dict>;
  using NsPtr = std::shared_ptr<Namespace>;
  using CallPtr = std::shared_ptr<const Callable>;
  using LoopPtr = std::shared_ptr<LoopState>;
  using Data = std::variant<std::monostate, bool, int64_t, double, StrPtr, ListPtr, DictPtr, NsPtr, CallPtr, LoopPtr>;
  Value(Kind k, Data d) : kind_(k), data_(std::move(d)) {}

  // Sets nesting_ and holds_state_ from the members of a new container.
  template <typename It, typename Get>
  void take_members(It begin, It end, Get get);

  Kind kind_ = Kind::Undefined;
  uint32_t nesting_ = 0;
  bool holds_state_ = false;
  Data data_;
};

// State of one running `for` loop, seen through `loop`.
struct LoopState {
  std::shared_ptr<const List> items;  // the (filtered) items being iterated
  size_t index0 = 0;
  int depth = 1;
};

// Python ==, with 1 == 1.0 == True and element-wise containers.
bool py_equal(const Value& a, const Value& b);
// Python <; false and *ok=false when the types do not order.
bool py_less(const Value& a, const Value& b, bool* ok);

}  // namespace reprox::tmpl
