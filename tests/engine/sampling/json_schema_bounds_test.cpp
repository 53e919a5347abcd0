// minLength / maxLength, minItems / maxItems and number ranges in a
// JsonSchema, as a JsonMachine follows them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/sampling/json_machine.hpp"
#include "engine/sampling/json_schema.hpp"

namespace reprox::engine {
namespace {

// A schema whose one required property "v" is `property`.
std::shared_ptr<const JsonSchema> with_property(const std::string& property) {
  std::string error;
  auto schema = JsonSchema::compile_text(
      R"({"type":"object","properties":{"v":)" + property + R"(},"required":["v"],"additionalProperties":false})",
      &error);
  EXPECT_TRUE(schema) << property << ": " << error;
  return schema;
}

std::string error_for(const std::string& property) {
  std::string error;
  EXPECT_FALSE(JsonSchema::compile_text(R"({"type":"object","properties":{"v":)" + property + "}}", &error))
      << property;
  return error;
}

bool follows_with_value(const JsonSchema& schema, const std::string& value) {
  JsonMachine m(&schema);
  return m.feed(R"({"v":)" + value + "}") && m.complete();
}

// The machine takes the value's bytes as a prefix (so it can be completed).
bool takes_prefix(const JsonSchema& schema, const std::string& value_prefix) {
  JsonMachine m(&schema);
  return m.feed(R"({"v":)" + value_prefix);
}

void expect_values(const std::string& property, const std::vector<std::string>& valid,
                   const std::vector<std::string>& invalid) {
  const auto schema = with_property(property);
  ASSERT_TRUE(schema);
  for (const auto& v : valid) EXPECT_TRUE(follows_with_value(*schema, v)) << property << " should take " << v;
  for (const auto& v : invalid) EXPECT_FALSE(follows_with_value(*schema, v)) << property << " should refuse " << v;
}

TEST(JsonSchemaBounds, StringLengthCountsCodePoints) {
  expect_values(R"({"type":"string","minLength":2,"maxLength":3})",
                {R"("ab")", R"("abc")", "\"\xC3\xA9\xE2\x82\xAC\"", R"("a\n")", R"("\u00e9x")", R"("\"\\")"},
                {R"("a")", R"("")", R"("abcd")", "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80x\"", R"("\ud83d\ude00")",
                 R"("a\n\tb")"});
  expect_values(R"({"type":"string","maxLength":0})", {R"("")"}, {R"("a")"});
  // A string without bounds still takes surrogate escapes.
  expect_values(R"({"type":"string"})", {R"("\ud83d\ude00")"}, {});
}

TEST(JsonSchemaBounds, ArraysCountTheirItems) {
  expect_values(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2})",
                {"[1]", "[1,2]", "[ 1 , 2 ]"}, {"[]", "[1,2,3]", "[ ]"});
  expect_values(R"({"type":"array","maxItems":0})", {"[]", "[ ]"}, {"[1]", "[[]]"});
  // Counts are per array: nested arrays keep their own.
  expect_values(R"({"type":"array","items":{"type":"array","minItems":2},"maxItems":2})",
                {"[[1,2],[3,4,5]]", "[]"}, {"[[1]]", "[[1,2],[3,4],[5,6]]"});
}

TEST(JsonSchemaBounds, IntegersStayInRange) {
  expect_values(R"({"type":"integer","minimum":1,"maximum":5})", {"1", "3", "5"},
                {"0", "6", "10", "-1", "1.0", "-0", "1e0"});
  const auto schema = with_property(R"({"type":"integer","minimum":1,"maximum":5})");
  // Each digit is taken only while some integer in range can still follow.
  EXPECT_TRUE(takes_prefix(*schema, "5"));
  EXPECT_FALSE(takes_prefix(*schema, "9"));
  EXPECT_FALSE(takes_prefix(*schema, "-"));
  EXPECT_FALSE(takes_prefix(*schema, "0"));
  EXPECT_FALSE(takes_prefix(*schema, "10"));
  expect_values(R"({"type":"integer","minimum":-20,"exclusiveMaximum":0})", {"-20", "-1", "-9"},
                {"0", "-0", "-21", "1"});
  expect_values(R"({"type":"integer","minimum":0})", {"0", "123456789012345678901234567890"}, {"-1", "-0.5"});
  // Fractional bounds round inward for integers.
  expect_values(R"({"type":"integer","minimum":0.5,"maximum":2.5})", {"1", "2"}, {"0", "3"});
}

TEST(JsonSchemaBounds, NumbersStayInRange) {
  expect_values(R"({"type":"number","exclusiveMinimum":0,"maximum":1})",
                {"0.5", "1", "1.0", "1.000000000", "0.000000001", "0.25"},
                {"0", "0.0", "-0.1", "1.01", "1.000000001", "1e0", "0.0000000001", "2"});
  expect_values(R"({"type":"number","minimum":-1.5,"maximum":0.3})", {"-1.5", "0.3", "0.29", "-0", "0"},
                {"-1.51", "0.31", "0.300000001"});
  // Draft 4's boolean exclusiveMinimum / exclusiveMaximum.
  expect_values(R"({"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true})",
                {"0.1", "9.999"}, {"0", "10"});
  // A number without bounds keeps its exponent.
  expect_values(R"({"type":"number"})", {"1e5", "-2.5E-3"}, {});
}

TEST(JsonSchemaBounds, BoundsLiveInUnionBranchesAndTypeLists) {
  // Pydantic's Optional[conint(ge=1)] and a bounded value beside null.
  expect_values(R"({"anyOf":[{"type":"integer","minimum":1},{"type":"null"}]})", {"1", "null", "99"}, {"0"});
  expect_values(R"({"type":["string","integer"],"maxLength":1,"maximum":9})", {R"("a")", "9"}, {R"("ab")", "10"});
}

TEST(JsonSchemaBounds, RefusesBoundsNoValueMeetsOrItCannotPlace) {
  EXPECT_NE(error_for(R"({"type":"string","minLength":3,"maxLength":2})").find("minLength"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"array","minItems":3,"maxItems":2})").find("minItems"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"integer","minimum":0.5,"maximum":0.9})").find("no integer"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"number","minimum":2,"maximum":1})").find("no number"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"number","exclusiveMinimum":1,"exclusiveMaximum":1.000000001})").find("no number"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"type":"number","minimum":1e19})").find("1e18"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"string","minLength":-1})").find("non-negative"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"string","minLength":"2"})").find("non-negative"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"number","maximum":"2"})").find("must be a number"), std::string::npos);
  EXPECT_NE(error_for(R"({"type":"array","minItems":70000})").find("65535"), std::string::npos);
  EXPECT_NE(error_for(R"({"enum":["a","bbb"],"minLength":2})").find("beside"), std::string::npos);
  EXPECT_NE(error_for(R"({"anyOf":[{"type":"integer"},{"type":"null"}],"minimum":0})").find("beside"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"type":"integer","multipleOf":2})").find("'multipleOf'"), std::string::npos);
}

TEST(JsonSchemaBounds, KeysTellBoundedStatesApart) {
  auto key_after = [](const JsonSchema& schema, const std::string& value_prefix) {
    JsonMachine m(&schema);
    EXPECT_TRUE(m.feed(R"({"v":)" + value_prefix)) << value_prefix;
    std::string key;
    m.append_key(&key);
    return key;
  };
  const auto text = with_property(R"({"type":"string","maxLength":3})");
  EXPECT_NE(key_after(*text, R"("ab)"), key_after(*text, R"("abc)"));
  const auto number = with_property(R"({"type":"integer","maximum":50})");
  EXPECT_NE(key_after(*number, "4"), key_after(*number, "6"));
  const auto items = with_property(R"({"type":"array","maxItems":2})");
  EXPECT_NE(key_after(*items, "[1"), key_after(*items, "[1,2"));
  // A key tells counts apart only as far as one token of `horizon` bytes can
  // reach: the minimum, and the room left below the maximum.
  auto key_within = [](const JsonSchema& schema, const std::string& value_prefix, uint32_t horizon) {
    JsonMachine m(&schema);
    EXPECT_TRUE(m.feed(R"({"v":)" + value_prefix)) << value_prefix;
    std::string key;
    m.append_key(&key, horizon);
    return key;
  };
  const auto long_text = with_property(R"({"type":"string","minLength":2,"maxLength":12})");
  EXPECT_EQ(key_within(*long_text, R"("ab)", 4), key_within(*long_text, R"("abc)", 4));
  EXPECT_NE(key_within(*long_text, R"("a)", 4), key_within(*long_text, R"("ab)", 4)) << "below the minimum";
  EXPECT_NE(key_within(*long_text, R"("abcdefghi)", 4), key_within(*long_text, R"("abcdefgh)", 4)) << "near the max";
  EXPECT_NE(key_after(*long_text, R"("ab)"), key_after(*long_text, R"("abc)")) << "with no horizon, every count";
  const auto long_list = with_property(R"({"type":"array","maxItems":100})");
  EXPECT_EQ(key_within(*long_list, "[1", 4), key_within(*long_list, "[1,2", 4));
  // Without bounds, states that differ only in counts share a key.
  const auto free = with_property(R"({"type":"string"})");
  EXPECT_EQ(key_after(*free, R"("ab)"), key_after(*free, R"("abc)"));
}

}  // namespace
}  // namespace reprox::engine
