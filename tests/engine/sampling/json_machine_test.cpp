#include "engine/sampling/json_machine.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace reprox::engine {
namespace {

// Feeds `text` whole: accepted byte by byte and a complete document.
bool accepts_document(const std::string& text) {
  JsonMachine m;
  return m.feed(text) && m.complete();
}

const std::vector<std::string> kValid = {
    "{}",
    "{ }",
    R"({"a":1})",
    R"(  {"a" : [1, -2.5e+3, 0, 0.25, 1E9, true, false, null], "b": {"c": {}}})",
    "{\n  \"name\": \"Ada\",\n  \"tags\": [\n    \"x\",\n    []\n  ]\n}",
    R"({"esc":"quote \" slash \\ \/ \b\f\n\r\t \u00e9\uD83D\uDE00"})",
    "{\"utf8\":\"\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"}",
    R"({"":"","k":[[[[{}]]]],"n":-0})",
    R"({"a":[{"b":[{"c":"d"}]}],"e":[]})",
};

TEST(JsonMachine, AcceptsObjectsByteByByte) {
  for (const auto& doc : kValid) {
    JsonMachine m;
    for (size_t i = 0; i < doc.size(); ++i) {
      ASSERT_FALSE(m.complete()) << doc << " at " << i;
      ASSERT_TRUE(m.feed(static_cast<uint8_t>(doc[i]))) << doc << " refused at byte " << i;
    }
    EXPECT_TRUE(m.complete()) << doc;
  }
}

TEST(JsonMachine, RefusesWhatIsNotOneObject) {
  const std::vector<std::string> invalid = {
      "[]",           "\"a\"",           "1",              "{} ",           "{}{}",
      "{'a':1}",      "{\"a\"}",         "{\"a\":}",       "{\"a\":1,}",    "{,}",
      "{\"a\":01}",   "{\"a\":1.}",      "{\"a\":.5}",     "{\"a\":1e}",    "{\"a\":-}",
      "{\"a\":tru}",  "{\"a\":True}",    "{\"a\":[1,]}",   "{\"a\":[1 2]}", "{\"a\":\"\\x\"}",
      "{\"a\":\"\\u12g4\"}", "{\"a\":\"\t\"}", "{\"a\":\"\xC0\xAF\"}", "{\"a\":\"\xED\xA0\x80\"}",
      "{\"a\":\"\xF4\x90\x80\x80\"}", "{\"a\":\"\xE2\x82\"}", "{\"a\":[}", "{\"a\":{]}", "{\"a\":1]}",
      "{\"a\":+1}",   "{\"a\":NaN}",     "{\"a\":1}}",
  };
  for (const auto& doc : invalid) EXPECT_FALSE(accepts_document(doc)) << doc;
}

TEST(JsonMachine, BoundsDepthAndWhitespace) {
  const std::string deep = "{\"a\":" + std::string(JsonMachine::kMaxDepth - 1, '[');
  std::string close(JsonMachine::kMaxDepth - 1, ']');
  EXPECT_TRUE(accepts_document(deep + close + "}"));
  JsonMachine m;
  EXPECT_TRUE(m.feed(deep));
  EXPECT_FALSE(m.feed('[')) << "one level past kMaxDepth";

  const std::string run(JsonMachine::kMaxWhitespaceRun, ' ');
  EXPECT_TRUE(accepts_document(run + "{" + run + "}"));
  EXPECT_FALSE(accepts_document(run + " {}"));
  EXPECT_TRUE(accepts_document("{\"a\":\"" + run + run + "\"}")) << "strings are not bounded";
}

TEST(JsonMachine, EqualKeysMeanEqualFutures) {
  // States reached by different texts but with equal keys accept the same bytes.
  JsonMachine a, b;
  ASSERT_TRUE(a.feed(R"({"x":[1,{"y":"ab)"));
  ASSERT_TRUE(b.feed(R"({"long key":[true,{"z":")"));
  std::string ka, kb;
  a.append_key(&ka);
  b.append_key(&kb);
  EXPECT_EQ(ka, kb);
  JsonMachine c;
  ASSERT_TRUE(c.feed(R"({"x":{"y":"ab)"));
  std::string kc;
  c.append_key(&kc);
  EXPECT_NE(ka, kc) << "a different stack is a different state";
}

// Random edits of valid documents: the machine accepts exactly those that
// simdjson parses as one object with no bytes after it.
TEST(JsonMachine, AgreesWithAParserOnRandomEdits) {
  const std::string alphabet = "{}[]\":,0123456789.-+eEtrufalsn \n\\ab\xC3\xA9";
  std::mt19937 rng(20261207);
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string s = kValid[rng() % kValid.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: s.erase(at, 1); break;
        case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: s[at] = c; break;
      }
    }
    json::Value v;
    const bool parser = json::valid_utf8(s) && !json::parse(s, v) && v.is_object() && !s.empty() && s.back() == '}' &&
                        s.find("\\u") == std::string::npos;
    if (s.find("\\u") != std::string::npos) continue;  // lone surrogates: parsers differ
    const bool machine = accepts_document(s);
    EXPECT_EQ(machine, parser) << s;
    (machine ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace reprox::engine
