// Jinja2's binary operators ~ + - * / // % ** with Python's semantics on
// ints, floats, strings, lists and tuples. Integer results that overflow
// int64 and repetitions past 16M elements are refused rather than wrapped
// or allocated.
#pragma once

#include <string>

#include "engine/template/builtins.hpp"

namespace reprox::tmpl {

// `a op b`. On error sets `fault` with a message that carries no source
// location (the caller adds it) and returns an unspecified value. A type
// error on an Undefined operand reports the Undefined's hint; `~` renders
// Undefined as "".
Value binary_op(const std::string& op, const Value& a, const Value& b, Fault& fault);

}  // namespace reprox::tmpl
