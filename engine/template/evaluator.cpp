#include "engine/template/evaluator.hpp"

#include <optional>

#include "engine/template/binary_ops.hpp"
#include "engine/template/slicing.hpp"

namespace reprox::tmpl {
namespace {

constexpr int kMaxCallDepth = 64;

struct Frame {
  std::vector<std::pair<std::string, Value>> vars;
  const Frame* parent = nullptr;

  const Value* find(const std::string& name) const {
    for (const Frame* f = this; f; f = f->parent)
      for (auto it = f->vars.rbegin(); it != f->vars.rend(); ++it)
        if (it->first == name) return &it->second;
    return nullptr;
  }
  void set(const std::string& name, Value v) {
    for (auto& kv : vars)
      if (kv.first == name) {
        kv.second = std::move(v);
        return;
      }
    vars.emplace_back(name, std::move(v));
  }
};

enum class Flow { Normal, Break, Continue };

std::string where(int line, int col) { return " (line " + std::to_string(line) + ", column " + std::to_string(col) + ")"; }

// Steps an operation pays for reading or building `v` (render_limits.hpp).
uint64_t size_cost(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: return v.as_string().size() / 64;
    case Value::Kind::List:
    case Value::Kind::Tuple: return v.as_list().size();
    case Value::Kind::Dict: return v.as_dict().items.size();
    case Value::Kind::Namespace: return v.as_namespace().attrs.items.size();
    default: return 0;
  }
}

size_t item_count(const Value& v) {
  if (v.is_sequence()) return v.as_list().size();
  return v.is_dict() ? v.as_dict().items.size() : 0;
}

// Expressions whose result is a new value (not one read from a variable).
bool builds_value(Expr::Kind k) {
  switch (k) {
    case Expr::Kind::Call:
    case Expr::Kind::Filter:
    case Expr::Kind::Binary:
    case Expr::Kind::Slice:
    case Expr::Kind::ListLit:
    case Expr::Kind::TupleLit:
    case Expr::Kind::DictLit: return true;
    default: return false;
  }
}

class Evaluator {
 public:
  Evaluator(const Value& context, const RenderLimits& limits, Fault& fault)
      : context_(context), limits_(limits), fault_(fault) {}

  bool run(const Body& root, std::string& out) {
    Frame frame;
    root_ = &frame;
    exec(root, frame, out);
    return !fault_.set;
  }

 private:
  bool failed() const { return fault_.set; }
  void fail(const std::string& msg, int line, int col) { fault_.fail(msg + where(line, col)); }

  // ---- render limits (render_limits.hpp) ----

  // Counts the exec_one/eval calls in progress (the C++ stack in use).
  struct Nested {
    explicit Nested(Evaluator& ev) : ev_(ev) { ++ev_.nesting_; }
    ~Nested() { --ev_.nesting_; }
    Evaluator& ev_;
  };

  // Enters one more statement or expression: false (and a fault) when the
  // nesting or the step budget is exhausted.
  bool enter(int line, int col) {
    if (failed()) return false;
    if (nesting_ > kMaxEvalNesting) {
      fail("template nested too deeply while rendering (more than " + std::to_string(kMaxEvalNesting) +
               " levels)",
           line, col);
      return false;
    }
    return spend(1, line, col);
  }

  bool spend(uint64_t steps, int line, int col) {
    steps_ += steps;
    if (steps_ > limits_.max_steps && !failed())
      fail("template exceeded its budget of " + std::to_string(limits_.max_steps) + " evaluation steps", line, col);
    return !failed();
  }

  // A value the template built: paid for, and within the size bounds.
  Value built(Value v, int line, int col) {
    if (failed() || !spend(size_cost(v), line, col)) return {};
    if (v.is_string() && v.as_string().size() > limits_.max_bytes)
      fail("template built a string longer than " + std::to_string(limits_.max_bytes) + " bytes", line, col);
    else if (item_count(v) > limits_.max_items)
      fail("template built a collection of more than " + std::to_string(limits_.max_items) + " items", line, col);
    else if (v.nesting() > kMaxValueNesting)
      fail("template built a value nested more than " + std::to_string(kMaxValueNesting) + " levels deep", line,
           col);
    return failed() ? Value() : std::move(v);
  }

  void check_output(const std::string& out, int line, int col) {
    if (out.size() > limits_.max_bytes && !failed())
      fail("template output exceeds " + std::to_string(limits_.max_bytes) + " bytes", line, col);
  }

  Value lookup(const std::string& name, const Frame& frame) const {
    if (const Value* v = frame.find(name)) return *v;
    if (const Value* v = context_.as_dict().find(name)) return *v;
    if (is_global_function(name)) return Value::callable(Callable{Callable::Type::Global, name, nullptr, nullptr});
    return Value::undefined("'" + name + "' is undefined");
  }

  // ---- statements ----

  Flow exec(const Body& body, Frame& frame, std::string& out) {
    for (const auto& s : body) {
      if (failed()) return Flow::Normal;
      Flow f = exec_one(*s, frame, out);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Flow exec_one(const Stmt& s, Frame& frame, std::string& out) {
    Nested nested(*this);
    if (!enter(s.line, s.col)) return Flow::Normal;
    Flow f = exec_stmt(s, frame, out);
    check_output(out, s.line, s.col);
    return f;
  }

  Flow exec_stmt(const Stmt& s, Frame& frame, std::string& out) {
    switch (s.kind) {
      case Stmt::Kind::Text: out += s.text; return Flow::Normal;
      case Stmt::Kind::Print: {
        Value v = eval(*s.expr, frame);
        if (!failed()) v.append_str(out);
        return Flow::Normal;
      }
      case Stmt::Kind::If:
        for (const auto& [cond, body] : s.branches) {
          Value c = eval(*cond, frame);
          if (failed()) return Flow::Normal;
          if (c.truthy()) return exec(body, frame, out);
        }
        return exec(s.else_body, frame, out);
      case Stmt::Kind::For: exec_for(s, frame, out); return Flow::Normal;
      case Stmt::Kind::Set: exec_set(s, frame); return Flow::Normal;
      case Stmt::Kind::SetBlock: {
        std::string captured;
        exec(s.body, frame, captured);
        Value v(std::move(captured));
        for (const auto& f : s.filters) v = built(apply_filter_expr(*f, std::move(v), frame), s.line, s.col);
        if (!failed()) frame.set(s.targets[0], std::move(v));
        return Flow::Normal;
      }
      case Stmt::Kind::Macro:
        frame.set(s.macro->name,
                  Value::callable(Callable{Callable::Type::Macro, s.macro->name, nullptr, s.macro.get()}));
        return Flow::Normal;
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
      case Stmt::Kind::Scope: return exec(s.body, frame, out);
    }
    return Flow::Normal;
  }

  bool unpack(const std::vector<std::string>& targets, const Value& v, Frame& frame, int line, int col) {
    if (targets.size() == 1) {
      frame.set(targets[0], v);
      return true;
    }
    List parts;
    if (!iterate(v, parts, fault_)) return false;
    if (parts.size() != targets.size()) {
      fail(std::string(parts.size() < targets.size() ? "not enough" : "too many") + " values to unpack (expected " +
               std::to_string(targets.size()) + ", got " + std::to_string(parts.size()) + ")",
           line, col);
      return false;
    }
    for (size_t i = 0; i < targets.size(); ++i) frame.set(targets[i], parts[i]);
    return true;
  }

  void exec_set(const Stmt& s, Frame& frame) {
    Value v = eval(*s.expr, frame);
    if (failed()) return;
    if (!s.attr.empty()) {
      Value target = lookup(s.targets[0], frame);
      if (target.kind() != Value::Kind::Namespace) {
        fail("cannot assign attribute on non-namespace object", s.line, s.col);
        return;
      }
      // A namespace reachable from its own attribute would be a reference cycle.
      if (v.holds_state()) {
        fail("unsupported: a namespace attribute holding a namespace, a loop or a method of one", s.line, s.col);
        return;
      }
      target.as_namespace().attrs.set(s.attr, std::move(v));
      return;
    }
    unpack(s.targets, v, frame, s.line, s.col);
  }

  void exec_for(const Stmt& s, Frame& frame, std::string& out) {
    Value seq = eval(*s.expr, frame);
    if (failed() || !spend(size_cost(seq), s.line, s.col)) return;
    List all;
    if (!iterate(seq, all, fault_)) return;
    auto items = std::make_shared<List>();
    if (s.cond) {
      for (auto& item : all) {
        Frame probe;
        probe.parent = &frame;
        if (!unpack(s.targets, item, probe, s.line, s.col)) return;
        Value c = eval(*s.cond, probe);
        if (failed()) return;
        if (c.truthy()) items->push_back(std::move(item));
      }
    } else {
      *items = std::move(all);
    }
    if (items->empty()) {
      exec(s.else_body, frame, out);
      return;
    }
    auto state = std::make_shared<LoopState>();
    state->items = items;
    state->depth = 1;  // only recursive loops (unsupported) go deeper in Jinja2
    Value loop_value = Value::loop(state);
    for (size_t i = 0; i < items->size(); ++i) {
      if (!spend(1, s.line, s.col)) return;
      state->index0 = i;
      Frame iter;
      iter.parent = &frame;
      iter.vars.reserve(4);
      iter.vars.emplace_back("loop", loop_value);
      if (!unpack(s.targets, (*items)[i], iter, s.line, s.col)) return;
      Flow f = exec(s.body, iter, out);
      if (failed() || f == Flow::Break) break;
    }
  }

  // ---- expressions ----

  Value eval(const Expr& e, const Frame& frame) {
    Nested nested(*this);
    if (!enter(e.line, e.col)) return {};
    Value v = eval_node(e, frame);
    return builds_value(e.kind) ? built(std::move(v), e.line, e.col) : v;
  }

  Value eval_node(const Expr& e, const Frame& frame) {
    switch (e.kind) {
      case Expr::Kind::Literal: return e.literal;
      case Expr::Kind::Name: return lookup(e.name, frame);
      case Expr::Kind::Attr: return eval_attr(e, frame);
      case Expr::Kind::Item: return eval_item(e, frame);
      case Expr::Kind::Slice: return eval_slice(e, frame);
      case Expr::Kind::Call: return eval_call(e, frame);
      case Expr::Kind::Filter: return apply_filter_expr(e, eval(*e.a, frame), frame);
      case Expr::Kind::Test: return eval_test(e, frame);
      case Expr::Kind::Neg:
      case Expr::Kind::Pos: return eval_unary(e, frame);
      case Expr::Kind::Not: return Value(!eval(*e.a, frame).truthy());
      case Expr::Kind::And: {
        Value l = eval(*e.a, frame);
        return l.truthy() ? eval(*e.b, frame) : l;
      }
      case Expr::Kind::Or: {
        Value l = eval(*e.a, frame);
        return l.truthy() ? l : eval(*e.b, frame);
      }
      case Expr::Kind::Cond: return eval_cond(e, frame);
      case Expr::Kind::Compare: return eval_compare(e, frame);
      case Expr::Kind::Binary: return eval_binary(e, eval(*e.a, frame), eval(*e.b, frame));
      case Expr::Kind::ListLit:
      case Expr::Kind::TupleLit: return eval_sequence_literal(e, frame);
      case Expr::Kind::DictLit: return eval_dict_literal(e, frame);
    }
    return {};
  }

  Value eval_attr(const Expr& e, const Frame& frame) {
    Value obj = eval(*e.a, frame);
    if (obj.is_undefined()) return undefined_error(obj, e);
    if (!spend(size_cost(obj), e.line, e.col)) return {};
    return get_attribute(obj, e.name, fault_);
  }

  // Both operands are evaluated before an Undefined object is reported.
  Value eval_item(const Expr& e, const Frame& frame) {
    Value obj = eval(*e.a, frame);
    Value key = eval(*e.b, frame);
    if (obj.is_undefined()) return undefined_error(obj, e);
    if (!spend(size_cost(obj), e.line, e.col)) return {};
    return get_item(obj, key, fault_);
  }

  Value eval_test(const Expr& e, const Frame& frame) {
    Value v = eval(*e.a, frame);
    CallArgs args = eval_args(e, frame);
    if (failed()) return {};
    bool r = apply_test(e.builtin, v, args, fault_);
    return Value(e.negated ? !r : r);
  }

  // Unary - and + on numbers; +True is 1, as in Python.
  Value eval_unary(const Expr& e, const Frame& frame) {
    Value v = eval(*e.a, frame);
    if (v.is_undefined()) return undefined_error(v, e);
    if (!v.is_number()) {
      fail(std::string("bad operand type for unary ") + (e.kind == Expr::Kind::Neg ? "-" : "+") + ": '" +
               v.type_name() + "'",
           e.line, e.col);
      return {};
    }
    if (e.kind == Expr::Kind::Pos) return v.kind() == Value::Kind::Bool ? Value(v.as_int()) : v;
    if (v.kind() == Value::Kind::Float) return Value(-v.as_double());
    return Value(-v.as_int());
  }

  // `a if b else c`: without an else, a false condition gives Undefined.
  Value eval_cond(const Expr& e, const Frame& frame) {
    Value c = eval(*e.b, frame);
    if (c.truthy()) return eval(*e.a, frame);
    return e.c ? eval(*e.c, frame)
               : Value::undefined("the inline if-expression evaluated to false and no else section was defined");
  }

  Value eval_sequence_literal(const Expr& e, const Frame& frame) {
    List items;
    items.reserve(e.args.size());
    for (const auto& a : e.args) items.push_back(eval(*a, frame));
    return e.kind == Expr::Kind::ListLit ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }

  // args holds key, value, key, value...; only string keys are supported.
  Value eval_dict_literal(const Expr& e, const Frame& frame) {
    Dict d;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      Value k = eval(*e.args[i], frame);
      Value v = eval(*e.args[i + 1], frame);
      if (!k.is_string()) {
        fail("unsupported: dict literal key of type '" + std::string(k.type_name()) + "' (only strings)", e.line,
             e.col);
        return {};
      }
      d.set(k.as_string(), std::move(v));
    }
    return Value::dict(std::move(d));
  }

  Value undefined_error(const Value& undef, const Expr& e) {
    fail(undef.undefined_hint(), e.line, e.col);
    return {};
  }

  CallArgs eval_args(const Expr& e, const Frame& frame) {
    CallArgs args;
    args.pos.reserve(e.args.size());
    for (const auto& a : e.args) args.pos.push_back(eval(*a, frame));
    for (const auto& [k, a] : e.kwargs) args.kw.emplace_back(k, eval(*a, frame));
    return args;
  }

  Value apply_filter_expr(const Expr& f, Value operand, const Frame& frame) {
    CallArgs args = eval_args(f, frame);
    if (failed() || !spend(size_cost(operand), f.line, f.col)) return {};
    Value r = apply_filter(f.builtin, operand, args, fault_);
    if (failed() && !fault_.raised && fault_.message.find("(line ") == std::string::npos)
      fault_.message += " in filter '" + f.name + "'" + where(f.line, f.col);
    return r;
  }

  Value eval_call(const Expr& e, const Frame& frame) {
    Value callee = eval(*e.a, frame);
    CallArgs args = eval_args(e, frame);
    if (failed()) return {};
    if (callee.is_undefined()) return undefined_error(callee, e);
    if (callee.kind() != Value::Kind::Callable) {
      fail("'" + std::string(callee.type_name()) + "' object is not callable", e.line, e.col);
      return {};
    }
    const Callable& c = callee.as_callable();
    Value r;
    switch (c.type) {
      case Callable::Type::Global: r = call_global(c.name, args, fault_); break;
      case Callable::Type::Method:
        if (spend(size_cost(*c.self), e.line, e.col)) r = call_method(*c.self, c.name, args, fault_);
        break;
      case Callable::Type::Macro: r = call_macro(*c.macro, args, e); break;
    }
    if (failed() && !fault_.raised && fault_.message.find("(line ") == std::string::npos)
      fault_.message += where(e.line, e.col);
    return r;
  }

  Value call_macro(const MacroDef& m, const CallArgs& args, const Expr& at) {
    if (depth_ >= kMaxCallDepth) {
      fail("macro recursion too deep", at.line, at.col);
      return {};
    }
    if (args.pos.size() > m.params.size()) {
      fail("macro '" + m.name + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)", at.line,
           at.col);
      return {};
    }
    Frame frame;
    frame.parent = root_;
    for (size_t i = 0; i < m.params.size(); ++i) {
      const Value* v = args.get(i, m.params[i]);
      if (v) {
        frame.set(m.params[i], *v);
      } else if (m.defaults[i]) {
        frame.set(m.params[i], eval(*m.defaults[i], frame));
      } else {
        frame.set(m.params[i], Value::undefined("parameter '" + m.params[i] + "' was not provided"));
      }
    }
    for (const auto& [k, v] : args.kw) {
      bool known = false;
      for (const auto& p : m.params) known = known || p == k;
      if (!known) {
        fail("macro '" + m.name + "' takes no keyword argument '" + k + "'", at.line, at.col);
        return {};
      }
    }
    std::string out;
    ++depth_;
    exec(m.body, frame, out);
    --depth_;
    return Value(std::move(out));
  }

  Value eval_compare(const Expr& e, const Frame& frame) {
    Value left = eval(*e.a, frame);
    for (size_t i = 0; i < e.ops.size(); ++i) {
      Value right = eval(*e.args[i], frame);
      if (failed() || !spend(size_cost(left) + size_cost(right), e.line, e.col)) return {};
      const std::string& op = e.ops[i];
      bool r;
      if (op == "==") {
        r = py_equal(left, right);
      } else if (op == "!=") {
        r = !py_equal(left, right);
      } else if (op == "in" || op == "not in") {
        r = contains(right, left, fault_);
        if (op == "not in") r = !r;
      } else {
        if (left.is_undefined()) return undefined_error(left, e);
        if (right.is_undefined()) return undefined_error(right, e);
        bool ok;
        bool lt = py_less(left, right, &ok);
        bool gt = ok ? py_less(right, left, &ok) : false;
        if (!ok) {
          fail("'" + op + "' not supported between instances of '" + left.type_name() + "' and '" + right.type_name() +
                   "'",
               e.line, e.col);
          return {};
        }
        r = op == "<" ? lt : op == ">" ? gt : op == "<=" ? !gt : !lt;
      }
      if (failed()) return {};
      if (!r) return Value(false);
      left = std::move(right);
    }
    return Value(true);
  }

  Value eval_slice(const Expr& e, const Frame& frame) {
    Value obj = eval(*e.a, frame);
    SliceBounds bounds;
    std::optional<int64_t>* parts[3] = {&bounds.start, &bounds.stop, &bounds.step};
    for (int i = 0; i < 3; ++i) {
      if (!e.args[i]) continue;
      Value v = eval(*e.args[i], frame);
      if (v.is_none()) continue;
      if (!v.is_int()) {
        fail("slice indices must be integers or None", e.line, e.col);
        return {};
      }
      *parts[i] = v.as_int();
    }
    if (failed() || !spend(size_cost(obj), e.line, e.col)) return {};
    if (obj.is_undefined()) return undefined_error(obj, e);
    Value out;
    std::string error;
    if (!py_slice(obj, bounds, &out, &error)) {
      fail(error, e.line, e.col);
      return {};
    }
    return out;
  }

  Value eval_binary(const Expr& e, const Value& a, const Value& b) {
    if (failed()) return {};
    Fault op_fault;
    Value r = binary_op(e.name, a, b, op_fault);
    if (!op_fault.set) return r;
    fail(op_fault.message, e.line, e.col);
    return {};
  }

  const Value& context_;
  const RenderLimits& limits_;
  Fault& fault_;
  const Frame* root_ = nullptr;
  int depth_ = 0;       // macro calls in progress
  int nesting_ = 0;     // exec_one/eval calls in progress
  uint64_t steps_ = 0;  // spent of limits_.max_steps
};

}  // namespace

bool evaluate(const Body& root, const Value& context, const RenderLimits& limits, std::string& out, Fault& fault) {
  return Evaluator(context, limits, fault).run(root, out);
}

}  // namespace reprox::tmpl
