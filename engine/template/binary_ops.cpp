#include "engine/template/binary_ops.hpp"

#include <cmath>
#include <cstdint>

namespace reprox::tmpl {
namespace {

constexpr int64_t kMaxRepeatBytes = int64_t{1} << 24;  // bytes a string repetition may produce
constexpr int64_t kMaxRepeatItems = int64_t{1} << 20;  // elements a list repetition may produce

bool both_numbers(const Value& a, const Value& b) { return a.is_number() && b.is_number(); }

// Numbers where either is a float combine as floats (Python's promotion).
bool any_float(const Value& a, const Value& b) {
  return a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float;
}

Value fail(Fault& fault, std::string msg) {
  fault.fail(std::move(msg));
  return {};
}

// The TypeError Python raises for `a op b`; an Undefined operand reports
// its own hint instead.
Value type_error(const std::string& op, const Value& a, const Value& b, Fault& fault) {
  if (a.is_undefined()) return fail(fault, a.undefined_hint());
  if (b.is_undefined()) return fail(fault, b.undefined_hint());
  if (op == "+" && a.is_string())
    return fail(fault, std::string("can only concatenate str (not \"") + b.type_name() + "\") to str");
  if (op == "+" && a.kind() == Value::Kind::List)
    return fail(fault, std::string("can only concatenate list (not \"") + b.type_name() + "\") to list");
  return fail(fault, "unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

Value concat(const Value& a, const Value& b) {
  std::string s;
  a.append_str(s);
  b.append_str(s);
  return Value(std::move(s));
}

Value add(const Value& a, const Value& b, Fault& fault) {
  if (both_numbers(a, b)) {
    if (any_float(a, b)) return Value(a.as_double() + b.as_double());
    int64_t r;
    if (!__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return Value(r);
    return fail(fault, "integer overflow");
  }
  if (a.is_string() && b.is_string()) {
    std::string s;
    s.reserve(a.as_string().size() + b.as_string().size());
    s += a.as_string();
    s += b.as_string();
    return Value(std::move(s));
  }
  if (a.is_sequence() && a.kind() == b.kind()) {
    List items = a.as_list();
    items.insert(items.end(), b.as_list().begin(), b.as_list().end());
    return a.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  return type_error("+", a, b, fault);
}

Value subtract(const Value& a, const Value& b, Fault& fault) {
  if (!both_numbers(a, b)) return type_error("-", a, b, fault);
  if (any_float(a, b)) return Value(a.as_double() - b.as_double());
  int64_t r;
  if (!__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) return Value(r);
  return fail(fault, "integer overflow");
}

// `seq` (a string, list or tuple) repeated `times` times; empty when times
// <= 0 or seq is empty (without looping `times` times).
Value repeat(const Value& seq, int64_t times) {
  const bool empty = seq.is_string() ? seq.as_string().empty() : seq.as_list().empty();
  if (empty || times <= 0) {
    if (seq.is_string()) return Value(std::string());
    return seq.kind() == Value::Kind::Tuple ? Value::tuple({}) : Value::list({});
  }
  if (seq.is_string()) {
    std::string s;
    for (int64_t i = 0; i < times; ++i) s += seq.as_string();
    return Value(std::move(s));
  }
  List items;
  for (int64_t i = 0; i < times; ++i) items.insert(items.end(), seq.as_list().begin(), seq.as_list().end());
  return seq.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

// Numeric product, or sequence repetition when one side is an int.
Value multiply(const Value& a, const Value& b, Fault& fault) {
  if (both_numbers(a, b)) {
    if (any_float(a, b)) return Value(a.as_double() * b.as_double());
    int64_t r;
    if (!__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) return Value(r);
    return fail(fault, "integer overflow");
  }
  const Value* seq = (a.is_string() || a.is_sequence()) && b.is_int()   ? &a
                     : (b.is_string() || b.is_sequence()) && a.is_int() ? &b
                                                                         : nullptr;
  if (!seq) return type_error("*", a, b, fault);
  int64_t times = seq == &a ? b.as_int() : a.as_int();
  int64_t unit = seq->is_string() ? static_cast<int64_t>(seq->as_string().size())
                                  : static_cast<int64_t>(seq->as_list().size());
  const int64_t max = seq->is_string() ? kMaxRepeatBytes : kMaxRepeatItems;
  if (times > 0 && unit > 0 && times > max / unit) return fail(fault, "repetition result too large");
  return repeat(*seq, times);
}

// Python's float / // %: the remainder takes the divisor's sign and the
// quotient is floored (CPython float_floor_div). y is non-zero.
Value float_division(const std::string& op, double x, double y) {
  if (op == "/") return Value(x / y);
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  if (op == "%") return Value(m);
  double div = (x - m) / y;
  double q = std::floor(div);
  if (div - q > 0.5) q += 1.0;
  return Value(q);
}

// Python's int // and %: floored quotient, remainder with the divisor's
// sign. y is non-zero.
Value int_division(const std::string& op, int64_t x, int64_t y, Fault& fault) {
  if (x == INT64_MIN && y == -1) return fail(fault, "integer overflow");
  int64_t q = x / y, m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) {
    --q;
    m += y;
  }
  return Value(op == "//" ? q : m);
}

// `/`, `//` and `%`; `/` always gives a float, as in Python 3.
Value divide(const std::string& op, const Value& a, const Value& b, Fault& fault) {
  if (!both_numbers(a, b)) {
    if (op == "%" && a.is_string()) return fail(fault, "unsupported: printf-style string formatting with '%'");
    return type_error(op, a, b, fault);
  }
  bool floats = any_float(a, b);
  if (floats ? b.as_double() == 0.0 : b.as_int() == 0)
    return fail(fault, op == "/" ? "division by zero" : op == "//" ? "integer division or modulo by zero" : "modulo by zero");
  if (op == "/" || floats) return float_division(op, a.as_double(), b.as_double());
  return int_division(op, a.as_int(), b.as_int(), fault);
}

// int ** non-negative int stays exact (overflow refused); anything else is
// computed in floating point.
Value power(const Value& a, const Value& b, Fault& fault) {
  if (!both_numbers(a, b)) return type_error("**", a, b, fault);
  if (any_float(a, b) || b.as_int() < 0) return Value(std::pow(a.as_double(), b.as_double()));
  int64_t base = a.as_int(), exp = b.as_int(), r = 1;
  bool overflow = false;
  while (exp > 0 && !overflow) {
    if (exp & 1) overflow = __builtin_mul_overflow(r, base, &r);
    exp >>= 1;
    if (exp > 0 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
  }
  if (overflow) return fail(fault, "integer overflow");
  return Value(r);
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b, Fault& fault) {
  if (op == "~") return concat(a, b);
  if (op == "+") return add(a, b, fault);
  if (op == "-") return subtract(a, b, fault);
  if (op == "*") return multiply(a, b, fault);
  if (op == "/" || op == "//" || op == "%") return divide(op, a, b, fault);
  if (op == "**") return power(a, b, fault);
  return fail(fault, "unsupported operator '" + op + "'");
}

}  // namespace reprox::tmpl
