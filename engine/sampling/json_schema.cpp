#include "engine/sampling/json_schema.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "common/json.hpp"
#include "engine/sampling/internal/key_bytes.hpp"
#include "engine/sampling/internal/schema_bounds.hpp"

namespace reprox::engine {

namespace {

constexpr std::string_view kRefused[] = {
    "pattern",          "multipleOf",     "uniqueItems",      "contains",          "minContains",
    "maxContains",      "patternProperties",
    "propertyNames",    "minProperties",  "maxProperties",    "if",                "then",
    "else",             "not",            "allOf",            "prefixItems",       "additionalItems",
    "dependentRequired", "dependentSchemas", "dependencies",  "unevaluatedProperties", "unevaluatedItems",
    "contentEncoding",  "contentMediaType", "contentSchema"};

constexpr size_t kMaxNodes = std::numeric_limits<uint16_t>::max();
constexpr int kMaxNesting = 64;

bool plain_name(const std::string& name) {
  for (const char c : name)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  return true;
}

}  // namespace

// Builds nodes_ depth first; node 0 reads any JSON value.
class JsonSchemaCompiler {
 public:
  JsonSchemaCompiler(const json::Value& root, JsonSchema& out) : root_(root), out_(out) {}

  bool run(std::string* error) {
    out_.nodes_.emplace_back();  // node 0: any value
    set_self(0);
    const int root = compile(root_, "#", 0);
    if (root >= 0 && out_.nodes_[static_cast<size_t>(root)].types != JsonSchema::kObject)
      fail("#", "the root must be an object (\"type\": \"object\")");
    if (!error_.empty()) {
      *error = error_;
      return false;
    }
    out_.root_ = static_cast<uint16_t>(root);
    return true;
  }

 private:
  int fail(const std::string& path, const std::string& why) {
    if (error_.empty()) error_ = why + " (at " + path + ")";
    return -1;
  }

  bool refuse(const std::string& path, const std::string& why) {
    fail(path, why);
    return false;
  }

  void set_self(size_t index) {
    for (int t = 0; t < JsonSchema::kTypeCount; ++t) out_.nodes_[index].by_type[t] = static_cast<uint16_t>(index);
  }

  int add(JsonSchema::Node node, const std::string& path) {
    if (out_.nodes_.size() >= kMaxNodes) return fail(path, "the schema is too large");
    out_.nodes_.push_back(std::move(node));
    return static_cast<int>(out_.nodes_.size() - 1);
  }

  int compile(const json::Value& s, const std::string& path, int nesting) {
    if (nesting > kMaxNesting) return fail(path, "the schema nests too deeply");
    if (s.is_bool()) return s.as_bool() ? 0 : fail(path, "a false schema accepts nothing");
    if (!s.is_object()) return fail(path, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.as_object())
      if (std::find(std::begin(kRefused), std::end(kRefused), key) != std::end(kRefused))
        return fail(path, "the keyword '" + key + "' is not supported");
    const bool combined = s.find("$ref") || s.find("anyOf") || s.find("oneOf") || s.find("enum") || s.find("const");
    if (combined)
      for (const auto& bound : internal::kBoundKeywords)
        if (s.find(bound))
          return fail(path, "'" + std::string(bound) + "' is supported only beside type, not beside $ref, anyOf, enum or const");
    if (const json::Value* ref = s.find("$ref")) return compile_ref(*ref, path, nesting);
    const json::Value* any_of = s.find("anyOf");
    if (!any_of) any_of = s.find("oneOf");  // with branches of distinct types, one and any agree
    if (any_of) return compile_union(*any_of, path, nesting);
    if (s.find("enum") || s.find("const")) return compile_literals(s, path);
    return compile_typed(s, path, nesting);
  }

  int compile_ref(const json::Value& ref, const std::string& path, int nesting) {
    if (!ref.is_string()) return fail(path, "$ref must be a string");
    const std::string& target = ref.as_string();
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    if (target.empty() || target[0] != '#') return fail(path, "only local $ref (\"#...\") is supported");
    const json::Value* at = &root_;
    size_t from = 1;
    while (from < target.size()) {
      if (target[from] != '/') return fail(path, "cannot resolve $ref '" + target + "'");
      size_t end = target.find('/', from + 1);
      if (end == std::string::npos) end = target.size();
      std::string part = target.substr(from + 1, end - from - 1);
      for (size_t k; (k = part.find("~1")) != std::string::npos;) part.replace(k, 2, "/");
      for (size_t k; (k = part.find("~0")) != std::string::npos;) part.replace(k, 2, "~");
      at = at->is_object() ? at->find(part) : nullptr;
      if (!at) return fail(path, "cannot resolve $ref '" + target + "'");
      from = end;
    }
    // A placeholder first, so that a recursive reference finds it.
    const int slot = add(JsonSchema::Node{}, path);
    if (slot < 0) return -1;
    refs_[target] = slot;
    const int body = compile(*at, target, nesting + 1);
    if (body < 0) return -1;
    JsonSchema::Node copy = out_.nodes_[static_cast<size_t>(body)];
    for (auto& next : copy.by_type)
      if (next == body) next = static_cast<uint16_t>(slot);
    out_.nodes_[static_cast<size_t>(slot)] = std::move(copy);
    return slot;
  }

  // An enum node: its values sorted and unique, at most kMaxNodes of them.
  int add_literals(JsonSchema::Node node, const std::string& path) {
    std::sort(node.literals.begin(), node.literals.end());
    node.literals.erase(std::unique(node.literals.begin(), node.literals.end()), node.literals.end());
    if (node.literals.size() >= kMaxNodes) return fail(path, "the enum has too many values");
    const int index = add(std::move(node), path);
    if (index >= 0) set_self(static_cast<size_t>(index));
    return index;
  }

  int compile_literals(const json::Value& s, const std::string& path) {
    JsonSchema::Node node;
    if (const json::Value* values = s.find("enum")) {
      if (!values->is_array() || values->as_array().empty()) return fail(path, "enum must be a non-empty array");
      for (const auto& v : values->as_array()) node.literals.push_back(json::dump(v));
    }
    if (const json::Value* value = s.find("const")) {
      std::string text = json::dump(*value);
      if (!node.literals.empty() && std::find(node.literals.begin(), node.literals.end(), text) == node.literals.end())
        return fail(path, "const is not among enum's values");
      node.literals.assign(1, std::move(text));
    }
    if (const json::Value* type = s.find("type")) {  // values of other types can never be valid
      uint8_t types = 0;
      if (!read_types(*type, path, &types)) return -1;
      auto off_type = [types](const std::string& v) { return !(literal_type(v) & types); };
      node.literals.erase(std::remove_if(node.literals.begin(), node.literals.end(), off_type), node.literals.end());
      if (node.literals.empty()) return fail(path, "no enum value has the type it names");
    }
    return add_literals(std::move(node), path);
  }

  // The type bits a compact JSON value has (an integer is a number too).
  static uint8_t literal_type(const std::string& v) {
    switch (v[0]) {
      case '{': return JsonSchema::kObject;
      case '[': return JsonSchema::kArray;
      case '"': return JsonSchema::kString;
      case 't':
      case 'f': return JsonSchema::kBoolean;
      case 'n': return JsonSchema::kNull;
      default:
        return v.find_first_of(".eE") == std::string::npos ? JsonSchema::kInteger | JsonSchema::kNumber
                                                            : JsonSchema::kNumber;
    }
  }

  int compile_union(const json::Value& branches, const std::string& path, int nesting) {
    if (!branches.is_array() || branches.as_array().empty()) return fail(path, "anyOf must be a non-empty array");
    std::vector<int> parts;
    for (size_t i = 0; i < branches.as_array().size(); ++i) {
      const int b = compile(branches.as_array()[i], path + "/anyOf/" + std::to_string(i), nesting + 1);
      if (b < 0) return -1;
      parts.push_back(b);
    }
    if (parts.size() == 1) return parts[0];
    // Object branches may share the type when their first property tells them apart.
    std::vector<int> objects;
    for (const int b : parts) {
      const auto& n = out_.nodes_[static_cast<size_t>(b)];
      if (n.types == JsonSchema::kObject && n.literals.empty()) objects.push_back(b);
    }
    if (objects.size() >= 2) {
      const int merged = compile_object_union(objects, path);
      if (merged < 0) return -1;
      parts.erase(std::remove_if(parts.begin(), parts.end(),
                                 [&](int b) { return std::find(objects.begin(), objects.end(), b) != objects.end(); }),
                  parts.end());
      parts.push_back(merged);
      if (parts.size() == 1) return merged;
    }
    auto is_null_only = [&](int b) {
      const auto& n = out_.nodes_[static_cast<size_t>(b)];
      return n.literals.empty() && n.types == JsonSchema::kNull;
    };
    const bool all_literal = std::all_of(parts.begin(), parts.end(), [&](int b) {
      return !out_.nodes_[static_cast<size_t>(b)].literals.empty() || is_null_only(b);
    });
    JsonSchema::Node node;
    if (all_literal) {  // enums (and null) merge into one enum
      for (const int b : parts) {
        const auto& n = out_.nodes_[static_cast<size_t>(b)];
        if (n.literals.empty()) node.literals.push_back("null");
        node.literals.insert(node.literals.end(), n.literals.begin(), n.literals.end());
      }
      return add_literals(std::move(node), path);
    }
    node.types = 0;
    for (const int b : parts) {
      const auto& n = out_.nodes_[static_cast<size_t>(b)];
      uint8_t types = n.types;
      if (types & JsonSchema::kNumber) types |= JsonSchema::kInteger;  // a number may be an integer
      if (!n.literals.empty() || (node.types & types) != 0)
        return fail(path, "anyOf branches must be of distinct types (enums may only join enums and null)");
      node.types |= types;
      for (int t = 0; t < JsonSchema::kTypeCount; ++t)
        if (types & (1u << t)) node.by_type[t] = n.by_type[t];
    }
    return add(std::move(node), path);
  }

  // One object node for anyOf object branches (json_schema.hpp: Node's
  // first_branch): its properties are the branches' first ones. A name that
  // begins one branch settles it; a name that begins several must hold
  // enum / const values, distinct across them, and its value settles it.
  int compile_object_union(const std::vector<int>& objects, const std::string& path) {
    const std::string unclear = "anyOf object branches must each begin with a required property";
    std::map<std::string, std::vector<int>> by_first_name;
    for (const int b : objects) {
      const auto& n = out_.nodes_[static_cast<size_t>(b)];
      if (n.free_object || n.properties.empty() || !n.properties[0].required) return fail(path, unclear);
      by_first_name[n.properties[0].name].push_back(b);
    }
    JsonSchema::Node merged;
    merged.types = JsonSchema::kObject;
    merged.free_object = false;
    for (const auto& [name, branches] : by_first_name) {
      uint16_t value = out_.nodes_[static_cast<size_t>(branches[0])].properties[0].node;
      if (branches.size() > 1) {
        const int v = merge_first_values(name, branches, path);
        if (v < 0) return -1;
        value = static_cast<uint16_t>(v);
      }
      merged.properties.push_back(JsonSchema::Property{name, value, false});
      merged.first_branch.push_back(branches.size() == 1 ? static_cast<uint16_t>(branches[0]) : 0);
      merged.names.emplace_back(name, static_cast<uint16_t>(merged.names.size()));  // by_first_name is sorted
    }
    const int index = add(std::move(merged), path);
    if (index >= 0) set_self(static_cast<size_t>(index));
    return index;
  }

  // The enum of the values that begin `branches` under property `name`, each
  // tagged with its branch (Node's literal_branch).
  int merge_first_values(const std::string& name, const std::vector<int>& branches, const std::string& path) {
    std::vector<std::pair<std::string, uint16_t>> tagged;
    for (const int b : branches) {
      const auto& value = out_.nodes_[out_.nodes_[static_cast<size_t>(b)].properties[0].node];
      if (value.literals.empty())
        return fail(path, "anyOf object branches that begin with the same property ('" + name +
                              "') must give it enum or const values that tell them apart");
      for (const auto& literal : value.literals) tagged.emplace_back(literal, static_cast<uint16_t>(b));
    }
    std::sort(tagged.begin(), tagged.end());
    JsonSchema::Node node;
    for (size_t i = 0; i < tagged.size(); ++i) {
      if (i > 0 && tagged[i].first == tagged[i - 1].first)
        return fail(path, "anyOf object branches share the value " + tagged[i].first + " of '" + name + "'");
      node.literals.push_back(tagged[i].first);
      node.literal_branch.push_back(tagged[i].second);
    }
    if (node.literals.size() >= kMaxNodes) return fail(path, "the enum has too many values");
    const int index = add(std::move(node), path);
    if (index >= 0) set_self(static_cast<size_t>(index));
    return index;
  }

  static bool type_bit(const std::string& name, uint8_t* bit) {
    static const std::pair<const char*, uint8_t> kTypes[] = {
        {"object", JsonSchema::kObject},   {"array", JsonSchema::kArray},     {"string", JsonSchema::kString},
        {"integer", JsonSchema::kInteger}, {"number", JsonSchema::kNumber},   {"boolean", JsonSchema::kBoolean},
        {"null", JsonSchema::kNull}};
    for (const auto& [n, b] : kTypes)
      if (name == n) {
        *bit = b;
        return true;
      }
    return false;
  }

  // The bits of "type": one name or a list of them.
  bool read_types(const json::Value& type, const std::string& path, uint8_t* types) {
    *types = 0;
    std::vector<json::Value> names = type.is_array() ? type.as_array() : std::vector<json::Value>{type};
    for (const auto& name : names) {
      uint8_t bit = 0;
      if (!name.is_string() || !type_bit(name.as_string(), &bit)) return refuse(path, "unknown type " + json::dump(name));
      *types |= bit;
    }
    return true;
  }

  int compile_typed(const json::Value& s, const std::string& path, int nesting) {
    JsonSchema::Node node;
    if (const json::Value* type = s.find("type")) {
      if (!read_types(*type, path, &node.types)) return -1;
    } else if (s.find("properties")) {
      node.types = JsonSchema::kObject;
    } else if (s.find("items")) {
      node.types = JsonSchema::kArray;
    }
    if (const json::Value* nullable = s.find("nullable"); nullable && nullable->is_bool() && nullable->as_bool())
      node.types |= JsonSchema::kNull;
    if (node.types == 0) return fail(path, "type must name at least one type");
    if (std::string why; !internal::read_schema_bounds(s, node, &why)) return fail(path, why);
    if (const json::Value* format = s.find("format"); format && format->is_string())
      node.format = StringFormat::parse(format->as_string());
    uint32_t shortest = 0, longest = 0;
    StringFormat::length_range(node.format, &shortest, &longest);
    if (node.format != StringFormat::kNone && (node.min_length > shortest || node.max_length < longest))
      return fail(path, "minLength / maxLength that cut into format '" + s.find("format")->as_string() +
                            "' are not supported");
    if (node.types & JsonSchema::kObject)
      if (!compile_object(s, path, nesting, node)) return -1;
    if (node.types & JsonSchema::kArray) {
      node.items = 0;
      if (const json::Value* items = s.find("items")) {
        const int i = compile(*items, path + "/items", nesting + 1);
        if (i < 0) return -1;
        node.items = static_cast<uint16_t>(i);
      }
    }
    const int index = add(std::move(node), path);
    if (index >= 0) set_self(static_cast<size_t>(index));
    return index;
  }

  bool compile_object(const json::Value& s, const std::string& path, int nesting, JsonSchema::Node& node) {
    const json::Value* props = s.find("properties");
    const json::Value* extra = s.find("additionalProperties");
    const bool closed = extra && extra->is_bool() && !extra->as_bool();
    if (extra && !closed && props) return refuse(path, "additionalProperties must be false beside properties");
    if (extra && !extra->is_bool()) return refuse(path, "additionalProperties must be a boolean");
    node.free_object = !props && !closed;
    if (!props) {
      if (const json::Value* r = s.find("required"); r && r->is_array() && !r->as_array().empty())
        return refuse(path, "required needs properties that name it");
      return true;
    }
    if (!props->is_object()) return refuse(path, "properties must be an object");
    std::vector<std::string> required;
    if (const json::Value* r = s.find("required")) {
      if (!r->is_array()) return refuse(path, "required must be an array");
      for (const auto& name : r->as_array()) {
        if (!name.is_string()) return refuse(path, "required must list strings");
        if (!props->find(name.as_string()))
          return refuse(path, "required names '" + name.as_string() + "', which properties lacks");
        required.push_back(name.as_string());
      }
    }
    if (props->as_object().size() >= kMaxNodes) return refuse(path, "the object has too many properties");
    for (const auto& [name, sub] : props->as_object()) {
      if (!plain_name(name)) return refuse(path, "property names with quotes, backslashes or control characters are not supported");
      const int child = compile(sub, path + "/properties/" + name, nesting + 1);
      if (child < 0) return false;
      const bool needed = std::find(required.begin(), required.end(), name) != required.end();
      node.properties.push_back(JsonSchema::Property{name, static_cast<uint16_t>(child), needed});
    }
    for (size_t i = 0; i < node.properties.size(); ++i)
      node.names.emplace_back(node.properties[i].name, static_cast<uint16_t>(i));
    std::sort(node.names.begin(), node.names.end());
    return true;
  }

  const json::Value& root_;
  JsonSchema& out_;
  std::map<std::string, int> refs_;
  std::string error_;
};

std::shared_ptr<const JsonSchema> JsonSchema::compile(const json::Value& root, std::string* error) {
  auto schema = std::make_shared<JsonSchema>();
  JsonSchemaCompiler compiler(root, *schema);
  if (!compiler.run(error)) return nullptr;
  return schema;
}

std::shared_ptr<const JsonSchema> JsonSchema::compile_text(std::string_view schema_json, std::string* error) {
  json::Value root;
  if (auto e = json::parse(schema_json, root)) {
    *error = "the schema is not JSON: " + e.message;
    return nullptr;
  }
  return compile(root, error);
}

void JsonSchema::append_identity(std::string* out) const {
  using internal::append_bytes;
  auto put_text = [out](const std::string& text) {
    append_bytes(out, text.size(), 4);
    *out += text;
  };
  auto put_list = [out](const std::vector<uint16_t>& list) {
    append_bytes(out, list.size(), 4);
    for (const uint16_t v : list) append_bytes(out, v, 2);
  };
  append_bytes(out, root_, 2);
  append_bytes(out, nodes_.size(), 4);
  for (const Node& n : nodes_) {  // every field a JsonMachine reads (names derive from properties)
    out->push_back(static_cast<char>(n.types));
    for (const uint16_t next : n.by_type) append_bytes(out, next, 2);
    out->push_back(static_cast<char>(n.free_object | (n.format << 1)));
    append_bytes(out, n.items, 2);
    append_bytes(out, n.min_length, 4);
    append_bytes(out, n.max_length, 4);
    append_bytes(out, n.min_items, 4);
    append_bytes(out, n.max_items, 4);
    for (const Fixed bound : {n.range.lo, n.range.hi}) {
      const auto bits = static_cast<unsigned __int128>(bound);
      append_bytes(out, static_cast<uint64_t>(bits), 8);
      append_bytes(out, static_cast<uint64_t>(bits >> 64), 8);
    }
    append_bytes(out, n.properties.size(), 4);
    for (const Property& p : n.properties) {
      put_text(p.name);
      append_bytes(out, p.node, 2);
      out->push_back(static_cast<char>(p.required));
    }
    append_bytes(out, n.literals.size(), 4);
    for (const std::string& literal : n.literals) put_text(literal);
    put_list(n.first_branch);
    put_list(n.literal_branch);
  }
}

}  // namespace reprox::engine
