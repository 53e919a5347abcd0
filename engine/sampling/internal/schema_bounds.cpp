#include "engine/sampling/internal/schema_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/json.hpp"

namespace reprox::engine::internal {

namespace {

constexpr uint32_t kMaxItemsBound = std::numeric_limits<uint16_t>::max();  // JsonMachine counts items in 16 bits

// A non-negative integer keyword; absent, `*out` is left alone.
bool read_count(const json::Value& s, const char* key, uint32_t* out, std::string* why) {
  const json::Value* v = s.find(key);
  if (!v) return true;
  if (!v->is_number() || !v->is_integer() || v->as_double() < 0) {
    *why = std::string(key) + " must be a non-negative integer";
    return false;
  }
  *out = static_cast<uint32_t>(std::min<uint64_t>(v->as_uint(), UINT32_MAX - 1));
  return true;
}

// v in units of 10^-9, rounded up or down; a double within its own
// rounding error of a whole number of units is that number (0.1 means 0.1).
bool to_fixed(const json::Value& v, bool round_up, Fixed* out) {
  if (v.type() == json::Value::Type::Int || v.type() == json::Value::Type::Uint) {
    const bool negative = v.type() == json::Value::Type::Int && v.as_int() < 0;
    const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(v.as_int()) : v.as_uint();
    if (magnitude > kMaxBound / kScale) return false;
    *out = (negative ? -Fixed(magnitude) : Fixed(magnitude)) * kScale;
    return true;
  }
  const double d = v.as_double();
  if (!std::isfinite(d) || std::fabs(d) > 1e18) return false;
  const long double units = static_cast<long double>(d) * 1e9L;
  const long double nearest = std::nearbyint(units);
  if (std::fabs(units - nearest) <= std::fabs(units) * 1e-15L + 1e-6L) *out = static_cast<Fixed>(nearest);
  else *out = static_cast<Fixed>(round_up ? std::ceil(units) : std::floor(units));
  return true;
}

enum class Side { kMinimum, kExclusiveMinimum, kMaximum, kExclusiveMaximum };

// Narrows `range` by the number at `key` (absent or a boolean: no change),
// rounded into the range.
bool narrow(const json::Value& s, const char* key, Side side, NumberRange* range, std::string* why) {
  const json::Value* v = s.find(key);
  if (!v || v->is_bool()) return true;
  Fixed f = 0;
  if (!v->is_number()) {
    *why = std::string(key) + " must be a number";
    return false;
  }
  if (!to_fixed(*v, side == Side::kMinimum || side == Side::kExclusiveMaximum, &f)) {
    *why = std::string(key) + " beyond 1e18 in magnitude is not supported";
    return false;
  }
  switch (side) {
    case Side::kMinimum: range->lo = std::max(range->lo, f); break;
    case Side::kExclusiveMinimum: range->lo = std::max(range->lo, f + 1); break;
    case Side::kMaximum: range->hi = std::min(range->hi, f); break;
    case Side::kExclusiveMaximum: range->hi = std::min(range->hi, f - 1); break;
  }
  return true;
}

bool is_true(const json::Value* v) { return v && v->is_bool() && v->as_bool(); }

}  // namespace

bool read_schema_bounds(const json::Value& s, JsonSchema::Node& node, std::string* why) {
  if (!read_count(s, "minLength", &node.min_length, why) || !read_count(s, "maxLength", &node.max_length, why) ||
      !read_count(s, "minItems", &node.min_items, why) || !read_count(s, "maxItems", &node.max_items, why))
    return false;
  const char* problem = node.min_length > node.max_length ? "minLength is above maxLength"
                        : node.min_items > node.max_items   ? "minItems is above maxItems"
                        : node.min_items > kMaxItemsBound   ? "minItems above 65535 is not supported"
                                                            : nullptr;
  if (problem) {
    *why = problem;
    return false;
  }
  if (node.max_items > kMaxItemsBound) node.max_items = UINT32_MAX;  // more than an answer can hold

  // Draft 4 writes an exclusive bound as a boolean beside minimum / maximum.
  const bool draft4_min = is_true(s.find("exclusiveMinimum")), draft4_max = is_true(s.find("exclusiveMaximum"));
  NumberRange& r = node.range;
  if (!narrow(s, "minimum", draft4_min ? Side::kExclusiveMinimum : Side::kMinimum, &r, why) ||
      !narrow(s, "exclusiveMinimum", Side::kExclusiveMinimum, &r, why) ||
      !narrow(s, "maximum", draft4_max ? Side::kExclusiveMaximum : Side::kMaximum, &r, why) ||
      !narrow(s, "exclusiveMaximum", Side::kExclusiveMaximum, &r, why))
    return false;
  const bool integer_only = (node.types & JsonSchema::kInteger) && !(node.types & JsonSchema::kNumber);
  if ((node.types & (JsonSchema::kInteger | JsonSchema::kNumber)) && r.empty(integer_only)) {
    *why = integer_only ? "no integer lies within the bounds" : "no number lies within the bounds";
    return false;
  }
  return true;
}

}  // namespace reprox::engine::internal
