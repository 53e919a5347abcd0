// Field readers shared by the request parsers: each reads one optional JSON
// field, checks its type and range, and on failure returns the OpenAI-style
// 400 naming the field (`param`). `null` counts as absent everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/api_error.hpp"
#include "common/json.hpp"

namespace reprox::api::checks {

using Check = std::optional<ApiError>;  // nullopt: the field is fine

// "a string", "an integer", "a number", "a boolean", "an object", "an array", "null".
std::string type_name(const json::Value& v);
std::string number_text(double d);

// "Invalid type for 'PARAM': expected EXPECTED, but got a string instead."
ApiError wrong_type(const std::string& param, std::string_view expected, const json::Value& got);
// "Invalid 'PARAM': DETAIL"
ApiError bad_value(const std::string& param, std::string_view detail);
ApiError missing(const std::string& param);

// The field's value, or nullptr when absent or null.
const json::Value* present(const json::Value& object, std::string_view key);

// A number in [lo, hi]; `out` untouched when absent.
Check read_number(const json::Value& object, std::string_view key, const std::string& param, double lo,
                  double hi, double& out);
// An integer (1 and 1.0 both count) in [lo, hi].
Check read_integer(const json::Value& object, std::string_view key, const std::string& param, int64_t lo,
                   int64_t hi, std::optional<int64_t>& out);
Check read_bool(const json::Value& object, std::string_view key, const std::string& param,
                std::optional<bool>& out);
Check read_string(const json::Value& object, std::string_view key, const std::string& param,
                  std::optional<std::string>& out);

// Integral JSON number as int64, nullopt when not integral or out of range.
std::optional<int64_t> integral_int64(const json::Value& v);

}  // namespace reprox::api::checks
