#include "engine/sampling/json_schema.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/sampling/json_machine.hpp"

namespace reprox::engine {
namespace {

std::shared_ptr<const JsonSchema> compile(const std::string& text) {
  std::string error;
  auto schema = JsonSchema::compile_text(text, &error);
  EXPECT_TRUE(schema) << text << ": " << error;
  return schema;
}

std::string compile_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(JsonSchema::compile_text(text, &error)) << text;
  return error;
}

bool follows(const JsonSchema& schema, const std::string& doc) {
  JsonMachine m(&schema);
  return m.feed(doc) && m.complete();
}

// OpenAI strict mode: every property required, no others, an optional
// object as anyOf with null, an enum.
const char* kPerson = R"({"type":"object","properties":{
  "name":{"type":"string","description":"ignored"},
  "age":{"type":"integer"},
  "height":{"type":"number"},
  "tags":{"type":"array","items":{"type":"string"}},
  "mood":{"enum":["happy","sad"]},
  "ok":{"type":"boolean"},
  "pet":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"],
                   "additionalProperties":false},{"type":"null"}]}},
  "required":["name","age","height","tags","mood","ok","pet"],"additionalProperties":false})";

TEST(JsonSchema, FollowsAStrictSchema) {
  const auto schema = compile(kPerson);
  const std::vector<std::string> valid = {
      R"({"name":"Ada","age":36,"height":1.7,"tags":["x","y"],"mood":"happy","ok":true,"pet":null})",
      R"({ "name" : "B", "age" : -2, "height" : 2e3, "tags" : [ ], "mood" : "sad", "ok" : false,
           "pet" : { "kind" : "cat" } })",
      R"({"name":"","age":0,"height":-0.5,"tags":[],"mood":"sad","ok":true,"pet":{"kind":""}})",
  };
  for (const auto& doc : valid) EXPECT_TRUE(follows(*schema, doc)) << doc;
  const std::vector<std::string> invalid = {
      R"({"age":36,"name":"Ada","height":1.7,"tags":[],"mood":"happy","ok":true,"pet":null})",  // order
      R"({"name":"Ada"})",                                                                      // missing
      R"({"name":"Ada","age":36.5,"height":1,"tags":[],"mood":"happy","ok":true,"pet":null})",  // not an integer
      R"({"name":"Ada","age":3e2,"height":1,"tags":[],"mood":"happy","ok":true,"pet":null})",
      R"({"name":"Ada","age":1,"height":"1","tags":[],"mood":"happy","ok":true,"pet":null})",
      R"({"name":"Ada","age":1,"height":1,"tags":[1],"mood":"happy","ok":true,"pet":null})",
      R"({"name":"Ada","age":1,"height":1,"tags":[],"mood":"angry","ok":true,"pet":null})",
      R"({"name":"Ada","age":1,"height":1,"tags":[],"mood":"happy","ok":null,"pet":null})",
      R"({"name":"Ada","age":1,"height":1,"tags":[],"mood":"happy","ok":true,"pet":{"kind":1}})",
      R"({"name":"Ada","age":1,"height":1,"tags":[],"mood":"happy","ok":true,"pet":{}})",
      R"({"name":"Ada","age":1,"height":1,"tags":[],"mood":"happy","ok":true,"pet":null,"x":1})",
      R"({"nam":"Ada"})",
      R"({"names":"Ada"})",
      R"([])",
  };
  for (const auto& doc : invalid) EXPECT_FALSE(follows(*schema, doc)) << doc;
}

TEST(JsonSchema, OptionalPropertiesMayBeLeftOutInOrder) {
  const auto schema = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
      "c":{"type":"integer"}},"required":["b"]})");
  for (const char* doc : {R"({"b":1})", R"({"a":1,"b":2})", R"({"b":1,"c":2})", R"({"a":1,"b":1,"c":1})"})
    EXPECT_TRUE(follows(*schema, doc)) << doc;
  for (const char* doc : {R"({})", R"({"a":1})", R"({"c":1,"b":1})", R"({"b":1,"a":1})", R"({"b":1,"b":2})"})
    EXPECT_FALSE(follows(*schema, doc)) << doc;
}

TEST(JsonSchema, RecursiveReferencesEnumsAndFreeParts) {
  const auto tree = compile(R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
      "kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v","kids"],"additionalProperties":false}},
      "$ref":"#/$defs/node"})");
  EXPECT_TRUE(follows(*tree, R"({"v":1,"kids":[{"v":2,"kids":[]},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"));
  EXPECT_FALSE(follows(*tree, R"({"v":1,"kids":[{"v":2}]})"));
  // Enums of any JSON, merged with null; a free object takes any JSON.
  const auto mixed = compile(R"({"type":"object","properties":{"e":{"anyOf":[{"enum":[1,"one",[1]]},{"type":"null"}]},
      "free":{"type":"object"},"any":{}},"required":["e","free","any"]})");
  for (const char* doc : {R"({"e":1,"free":{},"any":[1,{"x":null}]})", R"({"e":"one","free":{"k":[true]},"any":"s"})",
                          R"({"e":[1],"free":{"a":{"b":{}}},"any":-1.5})", R"({"e":null,"free":{},"any":null})"})
    EXPECT_TRUE(follows(*mixed, doc)) << doc;
  for (const char* doc : {R"({"e":2,"free":{},"any":1})", R"({"e":"on","free":{},"any":1})",
                          R"({"e":[1,2],"free":{},"any":1})", R"({"e":1,"free":[],"any":1})"})
    EXPECT_FALSE(follows(*mixed, doc)) << doc;
  // Type lists and OpenAPI's nullable.
  const auto listed = compile(R"({"type":"object","properties":{"x":{"type":["string","integer"]},
      "y":{"type":"string","nullable":true}},"required":["x","y"]})");
  EXPECT_TRUE(follows(*listed, R"({"x":"s","y":null})"));
  EXPECT_TRUE(follows(*listed, R"({"x":5,"y":"t"})"));
  EXPECT_FALSE(follows(*listed, R"({"x":5.5,"y":"t"})"));
  EXPECT_FALSE(follows(*listed, R"({"x":true,"y":"t"})"));
  // An enum keeps only the values of the type it names.
  const auto typed_enum = compile(R"({"type":"object","properties":{"e":{"type":"integer","enum":[1,"1",2.5]}},
      "required":["e"]})");
  EXPECT_TRUE(follows(*typed_enum, R"({"e":1})"));
  EXPECT_FALSE(follows(*typed_enum, R"({"e":"1"})"));
  EXPECT_FALSE(follows(*typed_enum, R"({"e":2.5})"));
}

TEST(JsonSchema, RefusesWhatItCannotEnforce) {
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}})").find("'pattern'"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"n":{"type":"array","uniqueItems":true}}})")
                .find("'uniqueItems'"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"array"})").find("root"), std::string::npos);
  EXPECT_NE(compile_error(R"({"anyOf":[{"type":"object"},{"type":"object","properties":{}}]})")
                .find("begin with a required property"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}})").find("resolve"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{},"required":["x"]})").find("required"), std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"a":{}},"additionalProperties":true})")
                .find("additionalProperties"),
            std::string::npos);
  EXPECT_NE(compile_error("{not json").find("not JSON"), std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","required":["x"]})").find("required"), std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"e":{"type":"string","enum":[1,2]}}})").find("enum"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type":"object","properties":{"a\"b":{}}})").find("property names"), std::string::npos);
}

// A comma after an object's last property could lead only to whitespace:
// a dead end, where the guide would have to end the answer mid-object.
TEST(JsonSchema, NoCommaAfterTheLastProperty) {
  const auto schema = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
      "required":["a"],"additionalProperties":false})");
  JsonMachine after_b(schema.get()), after_a(schema.get());
  ASSERT_TRUE(after_b.feed(R"({"a":1,"b":2)"));
  EXPECT_FALSE(after_b.feed(","));
  ASSERT_TRUE(after_a.feed(R"({"a":1)"));
  EXPECT_TRUE(after_a.feed(",")) << "b may still come";
  JsonMachine free_object;
  ASSERT_TRUE(free_object.feed(R"({"a":1)"));
  EXPECT_TRUE(free_object.feed(","));
}

TEST(JsonSchema, KeysSeparateSchemaStates) {
  const auto schema = compile(R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},
      "required":["a","b"]})");
  JsonMachine in_a(schema.get()), in_b(schema.get());
  ASSERT_TRUE(in_a.feed(R"({"a":"x)"));
  ASSERT_TRUE(in_b.feed(R"({"a":"x","b":"x)"));
  std::string ka, kb;
  in_a.append_key(&ka);
  in_b.append_key(&kb);
  EXPECT_NE(ka, kb) << "after a, b must come; after b, the object may close";
  JsonMachine a2 = in_a, b2 = in_b;
  EXPECT_FALSE(a2.feed("\"}"));
  EXPECT_TRUE(b2.feed("\"}"));
}

}  // namespace
}  // namespace reprox::engine
