// anyOf / oneOf of object branches, told apart by their first property's
// name or by its enum / const value (a discriminator), as a JsonMachine
// follows them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/sampling/json_machine.hpp"
#include "engine/sampling/json_schema.hpp"

namespace reprox::engine {
namespace {

std::shared_ptr<const JsonSchema> compile_union_schema(const std::string& text) {
  std::string error;
  auto schema = JsonSchema::compile_text(text, &error);
  EXPECT_TRUE(schema) << text << ": " << error;
  return schema;
}

std::string union_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(JsonSchema::compile_text(text, &error)) << text;
  return error;
}

bool takes_whole(const JsonSchema& schema, const std::string& doc) {
  JsonMachine m(&schema);
  return m.feed(doc) && m.complete();
}

// Pydantic's discriminated union, as OpenAI's strict mode receives it.
const char* kPets = R"({"type":"object","properties":{"pet":{"anyOf":[
    {"$ref":"#/$defs/Cat"},{"$ref":"#/$defs/Dog"},{"type":"null"}]}},"required":["pet"],
  "additionalProperties":false,"$defs":{
    "Cat":{"type":"object","properties":{"kind":{"const":"cat"},"lives":{"type":"integer"}},
           "required":["kind","lives"],"additionalProperties":false},
    "Dog":{"type":"object","properties":{"kind":{"enum":["dog","puppy"]},"good":{"type":"boolean"}},
           "required":["kind","good"],"additionalProperties":false}}})";

TEST(JsonSchemaUnion, ADiscriminatorSettlesTheBranch) {
  const auto schema = compile_union_schema(kPets);
  ASSERT_TRUE(schema);
  for (const char* doc : {R"({"pet":{"kind":"cat","lives":9}})", R"({"pet":{"kind":"dog","good":true}})",
                          R"({"pet":{"kind":"puppy","good":false}})", R"({"pet": { "kind" : "cat" , "lives" : 1 }})",
                          R"({"pet":null})"})
    EXPECT_TRUE(takes_whole(*schema, doc)) << doc;
  for (const char* doc : {R"({"pet":{"kind":"cat","good":true}})", R"({"pet":{"kind":"dog","lives":9}})",
                          R"({"pet":{"kind":"cow","good":true}})", R"({"pet":{"kind":"cat"}})",
                          R"({"pet":{"lives":9}})", R"({"pet":{}})", R"({"pet":{"kind":"dog","good":true,"x":1}})"})
    EXPECT_FALSE(takes_whole(*schema, doc)) << doc;
}

TEST(JsonSchemaUnion, AFirstPropertyNameSettlesTheBranch) {
  const auto schema = compile_union_schema(R"({"type":"object","properties":{"shape":{"oneOf":[
      {"type":"object","properties":{"radius":{"type":"number"}},"required":["radius"],"additionalProperties":false},
      {"type":"object","properties":{"width":{"type":"number"},"height":{"type":"number"}},
       "required":["width","height"],"additionalProperties":false}]}},"required":["shape"]})");
  ASSERT_TRUE(schema);
  EXPECT_TRUE(takes_whole(*schema, R"({"shape":{"radius":1.5}})"));
  EXPECT_TRUE(takes_whole(*schema, R"({"shape":{"width":2,"height":3}})"));
  EXPECT_FALSE(takes_whole(*schema, R"({"shape":{"radius":1,"height":3}})"));
  EXPECT_FALSE(takes_whole(*schema, R"({"shape":{"width":2}})"));
  EXPECT_FALSE(takes_whole(*schema, R"({"shape":{"height":3,"width":2}})"));
}

TEST(JsonSchemaUnion, UnionsNestAndRecurse) {
  // An expression tree: a number, or an operation whose operands are trees.
  const auto schema = compile_union_schema(R"({"type":"object","properties":{"e":{"$ref":"#/$defs/Expr"}},
      "required":["e"],"$defs":{"Expr":{"anyOf":[
        {"type":"object","properties":{"op":{"enum":["+","*"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},
         "required":["op","args"],"additionalProperties":false},
        {"type":"object","properties":{"value":{"type":"number"}},"required":["value"],"additionalProperties":false}]}}})");
  ASSERT_TRUE(schema);
  EXPECT_TRUE(takes_whole(*schema, R"({"e":{"op":"+","args":[{"value":1},{"op":"*","args":[{"value":2}]}]}})"));
  EXPECT_FALSE(takes_whole(*schema, R"({"e":{"op":"+","args":[{"value":1,"op":"*"}]}})"));
}

TEST(JsonSchemaUnion, KeysFollowTheSettledBranch) {
  const auto schema = compile_union_schema(kPets);
  ASSERT_TRUE(schema);
  auto key_after = [&](const std::string& prefix) {
    JsonMachine m(schema.get());
    EXPECT_TRUE(m.feed(prefix)) << prefix;
    std::string key;
    m.append_key(&key);
    return key;
  };
  EXPECT_NE(key_after(R"({"pet":{"kind":"cat",)"), key_after(R"({"pet":{"kind":"dog",)"));
  EXPECT_EQ(key_after(R"({"pet":{"kind":"dog",)"), key_after(R"({"pet":{"kind":"puppy",)"));
}

TEST(JsonSchemaUnion, RefusesBranchesItCannotTellApart) {
  EXPECT_NE(union_error(R"({"anyOf":[{"type":"object"},{"type":"object","properties":{"a":{}},"required":["a"]}]})")
                .find("begin with a required property"),
            std::string::npos);
  EXPECT_NE(union_error(R"({"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
      {"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}]})")
                .find("tell them apart"),
            std::string::npos);
  EXPECT_NE(union_error(R"({"anyOf":[{"type":"object","properties":{"k":{"enum":["x","y"]}},"required":["k"]},
      {"type":"object","properties":{"k":{"const":"y"}},"required":["k"]}]})")
                .find("share the value \"y\""),
            std::string::npos);
  EXPECT_NE(union_error(R"({"anyOf":[{"type":"object","properties":{"a":{},"b":{}},"required":["b"]},
      {"type":"object","properties":{"c":{}},"required":["c"]}]})")
                .find("begin with a required property"),
            std::string::npos);
  // Other types still may not share a branch's type.
  EXPECT_NE(union_error(R"({"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"string"}]}}})")
                .find("distinct types"),
            std::string::npos);
}

}  // namespace
}  // namespace reprox::engine
