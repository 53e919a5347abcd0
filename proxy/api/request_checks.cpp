#include "proxy/api/request_checks.hpp"

#include <cmath>

namespace reprox::api::checks {

std::string type_name(const json::Value& v) {
  using T = json::Value::Type;
  switch (v.type()) {
    case T::Null: return "null";
    case T::Bool: return "a boolean";
    case T::Int:
    case T::Uint: return "an integer";
    case T::Double: return v.is_integer() ? "an integer" : "a decimal";
    case T::String: return "a string";
    case T::Array: return "an array";
    case T::Object: return "an object";
  }
  return "an unknown value";
}

std::string number_text(double d) {
  std::string out;
  json::write_number(out, d);
  return out;
}

ApiError wrong_type(const std::string& param, std::string_view expected, const json::Value& got) {
  std::string msg = "Invalid type for '" + param + "': expected ";
  msg.append(expected);
  msg += ", but got " + type_name(got) + " instead.";
  return ApiError::invalid(param, std::move(msg));
}

ApiError bad_value(const std::string& param, std::string_view detail) {
  std::string msg = "Invalid '" + param + "': ";
  msg.append(detail);
  return ApiError::invalid(param, std::move(msg));
}

ApiError missing(const std::string& param) {
  return ApiError::invalid(param, "Missing required parameter: '" + param + "'.");
}

const json::Value* present(const json::Value& object, std::string_view key) {
  const json::Value* v = object.find(key);
  return v && !v->is_null() ? v : nullptr;
}

Check read_number(const json::Value& object, std::string_view key, const std::string& param, double lo,
                  double hi, double& out) {
  const json::Value* v = present(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) return wrong_type(param, "a number", *v);
  double d = v->as_double();
  if (!(d >= lo && d <= hi))
    return bad_value(param, "expected a value in [" + number_text(lo) + ", " + number_text(hi) + "], but got " +
                                number_text(d) + " instead.");
  out = d;
  return std::nullopt;
}

std::optional<int64_t> integral_int64(const json::Value& v) {
  if (!v.is_number() || !v.is_integer()) return std::nullopt;
  if (v.type() == json::Value::Type::Uint && v.as_uint() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  if (v.type() == json::Value::Type::Double) {
    double d = v.as_double();
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return std::nullopt;
  }
  return v.as_int();
}

Check read_integer(const json::Value& object, std::string_view key, const std::string& param, int64_t lo,
                   int64_t hi, std::optional<int64_t>& out) {
  const json::Value* v = present(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !v->is_integer()) return wrong_type(param, "an integer", *v);
  auto i = integral_int64(*v);
  if (!i || *i < lo || *i > hi)
    return bad_value(param, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], but got " + json::dump(*v) + " instead.");
  out = *i;
  return std::nullopt;
}

Check read_bool(const json::Value& object, std::string_view key, const std::string& param,
                std::optional<bool>& out) {
  const json::Value* v = present(object, key);
  if (!v) return std::nullopt;
  if (!v->is_bool()) return wrong_type(param, "a boolean", *v);
  out = v->as_bool();
  return std::nullopt;
}

Check read_string(const json::Value& object, std::string_view key, const std::string& param,
                  std::optional<std::string>& out) {
  const json::Value* v = present(object, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) return wrong_type(param, "a string", *v);
  out = v->as_string();
  return std::nullopt;
}

}  // namespace reprox::api::checks
