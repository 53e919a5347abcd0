// A JSON Schema compiled for guided decoding (response_format json_schema):
// the subset OpenAI's strict structured outputs use, as a graph of nodes a
// JsonMachine follows byte by byte.
//
// Supported: type (one or a list), properties with required (keys appear in
// the schema's order; optional ones may be left out; no other keys),
// additionalProperties false, items, enum, const, anyOf / oneOf whose
// branches differ in type (Optional[X] and the like; enums and null merge)
// or are objects told apart by their first property (its name, or its
// enum / const value: a discriminator),
// nullable, $ref to "#", "#/$defs/..." or "#/definitions/..." (recursion
// included). Bounds: minLength / maxLength (strings, in code points),
// minItems / maxItems, and minimum / maximum / exclusiveMinimum /
// exclusiveMaximum (numbers and integers, magnitudes up to 10^18; a bounded
// number is written without an exponent, with at most 9 decimals); format
// date, time, date-time, uuid and ipv4 (string_format.hpp; such a string
// takes no escapes). A schema without type or constraints, and an object
// without properties, accept any JSON. Annotations (title, description,
// default, examples, other formats, ...) are ignored. Every other keyword (pattern, multipleOf,
// uniqueItems, allOf, ...) is refused, as are bounds that no value meets
// and bounds beside enum or const: an answer must never break a schema it
// was asked to follow. The root must be an object.
//
// Immutable after compile(); shared by the machines that read it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/sampling/number_bounds.hpp"
#include "engine/sampling/string_format.hpp"

namespace reprox::json {
class Value;
}

namespace reprox::engine {

class JsonSchema {
 public:
  enum Type : uint8_t { kObject = 1, kArray = 2, kString = 4, kInteger = 8, kNumber = 16, kBoolean = 32, kNull = 64 };
  static constexpr uint8_t kAnyType = 127;
  static constexpr int kTypeCount = 7;

  struct Property {
    std::string name;  // needs no escaping in JSON
    uint16_t node;
    bool required;
  };
  struct Node {
    uint8_t types = kAnyType;
    // The node that reads a value of type bit i: this node, or an anyOf branch.
    uint16_t by_type[kTypeCount] = {};
    bool free_object = true;  // any keys, any values (no properties given)
    std::vector<Property> properties;                     // in schema order
    std::vector<std::pair<std::string, uint16_t>> names;  // (name, property index), sorted by name
    uint16_t items = 0;                                   // arrays: the items' node
    std::vector<std::string> literals;                    // enum/const: compact JSON, sorted; else empty
    uint32_t min_length = 0, max_length = UINT32_MAX;     // strings, in code points
    uint32_t min_items = 0, max_items = UINT32_MAX;       // arrays
    NumberRange range;                                    // numbers and integers
    StringFormat::Kind format = StringFormat::kNone;      // strings: an enforced "format"
    // anyOf of objects, merged: `properties` are the branches' first ones
    // (none required, the object may not close before one), and
    // first_branch[i] is the branch that property i settles, or 0 when its
    // value settles it: then that value is an enum whose literal_branch[k]
    // is the branch literal k settles.
    std::vector<uint16_t> first_branch;
    std::vector<uint16_t> literal_branch;

    bool object_union() const { return !first_branch.empty(); }

    bool bounds_length() const { return min_length != 0 || max_length != UINT32_MAX; }
    bool bounds_items() const { return min_items != 0 || max_items != UINT32_MAX; }
  };

  // The schema; null and *error set when it uses a keyword this subset
  // lacks or its root is not an object.
  static std::shared_ptr<const JsonSchema> compile(const json::Value& schema, std::string* error);
  // The same from its JSON text (also null when that is not JSON).
  static std::shared_ptr<const JsonSchema> compile_text(std::string_view schema_json, std::string* error);

  const Node& node(uint16_t index) const { return nodes_[index]; }
  uint16_t root() const { return root_; }
  // Appends bytes naming the compiled schema: equal identities accept the
  // same documents (schemas differing only in annotations share one).
  void append_identity(std::string* out) const;

 private:
  friend class JsonSchemaCompiler;
  std::vector<Node> nodes_;
  uint16_t root_ = 0;
};

}  // namespace reprox::engine
