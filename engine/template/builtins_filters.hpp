// Internal to the filter implementation: the filters that live outside
// builtins_filters.cpp, which binds them to their Jinja2 names.
#pragma once

#include "engine/template/builtins.hpp"

namespace reprox::tmpl::filters {

// Every filter takes the operand and the call's arguments (bound as
// Python binds them: position, else keyword). On failure it sets `fault`
// and returns an unspecified value.
using FilterFn = Value (*)(const Value& operand, const CallArgs& args, Fault& fault);

// Truthiness of an optional boolean argument; `dflt` when not passed.
inline bool arg_bool(const CallArgs& a, size_t i, const char* name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : dflt;
}

// String and number filters (builtins_filters_text.cpp), named after
// Jinja2's do_<filter> functions.
Value do_default(const Value& v, const CallArgs& a, Fault& fault);  // also `d`
Value do_tojson(const Value& v, const CallArgs& a, Fault& fault);
Value do_length(const Value& v, const CallArgs& a, Fault& fault);  // also `count`
Value do_string(const Value& v, const CallArgs& a, Fault& fault);  // also `safe`
Value do_escape(const Value& v, const CallArgs& a, Fault& fault);  // also `e`
Value do_trim(const Value& v, const CallArgs& a, Fault& fault);
Value do_upper(const Value& v, const CallArgs& a, Fault& fault);
Value do_lower(const Value& v, const CallArgs& a, Fault& fault);
Value do_capitalize(const Value& v, const CallArgs& a, Fault& fault);
Value do_title(const Value& v, const CallArgs& a, Fault& fault);
Value do_replace(const Value& v, const CallArgs& a, Fault& fault);
Value do_indent(const Value& v, const CallArgs& a, Fault& fault);
Value do_wordcount(const Value& v, const CallArgs& a, Fault& fault);
Value do_int(const Value& v, const CallArgs& a, Fault& fault);
Value do_float(const Value& v, const CallArgs& a, Fault& fault);
Value do_abs(const Value& v, const CallArgs& a, Fault& fault);
Value do_round(const Value& v, const CallArgs& a, Fault& fault);

}  // namespace reprox::tmpl::filters
