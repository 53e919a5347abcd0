// Python's slice obj[start:stop:step] on strings (by code point), lists and
// tuples, for the template evaluator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/template/value.hpp"

namespace reprox::tmpl {

struct SliceBounds {
  std::optional<int64_t> start, stop, step;  // absent: None
};

// The slice of `obj` (a string, list or tuple; a tuple gives a tuple), with
// Python's clamping of out-of-range and negative bounds. On a step of 0 or
// an object that is not subscriptable, returns false and says why in
// *error (Python's wording).
bool py_slice(const Value& obj, const SliceBounds& bounds, Value* out, std::string* error);

}  // namespace reprox::tmpl
