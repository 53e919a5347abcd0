// Reads a JSON Schema's bounds into a compiled node: minLength / maxLength,
// minItems / maxItems, and minimum / maximum / exclusiveMinimum /
// exclusiveMaximum (draft 4's boolean forms too) as a NumberRange.
// Pure functions; json_schema.cpp's compiler calls them.
#pragma once

#include <string>
#include <string_view>

#include "engine/sampling/json_schema.hpp"

namespace reprox::engine::internal {

inline constexpr std::string_view kBoundKeywords[] = {"minLength", "maxLength", "minItems", "maxItems",
                                                      "minimum",   "maximum",   "exclusiveMinimum", "exclusiveMaximum"};

// Sets node's bounds from schema object `s` (node.types already read).
// False, with *why, when a bound is malformed, out of the supported range,
// or leaves no value of the node's types.
bool read_schema_bounds(const json::Value& s, JsonSchema::Node& node, std::string* why);

}  // namespace reprox::engine::internal
