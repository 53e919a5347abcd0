// Differently written but equivalent requests must share one key.
#include <gtest/gtest.h>

#include "tests/policies/key_test_util.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy {
namespace {

using testing::key_of;

struct SamePair {
  const char* what;
  const char* a;
  const char* b;
};

#define U R"("messages":[{"role":"user","content":"hi"}])"

const SamePair kSame[] = {
    {"field order", "{" U R"(,"temperature":0.7,"seed":3})", R"({"seed":3,"temperature":0.7,)" U "}"},
    {"whitespace", "{" U R"(,"temperature":0.7})",
     "{\n  \"messages\" : [ { \"role\" : \"user\" , \"content\" : \"hi\" } ] ,\n\t\"temperature\" : 0.7 }"},
    {"1 vs 1.0", "{" U R"(,"temperature":1})", "{" U R"(,"temperature":1.0})"},
    {"1 vs 1e0", "{" U R"(,"temperature":1})", "{" U R"(,"temperature":1e0})"},
    {"0.5 vs 5e-1", "{" U R"(,"top_p":0.5})", "{" U R"(,"top_p":5e-1})"},
    {"0.70 vs 0.7", "{" U R"(,"temperature":0.70})", "{" U R"(,"temperature":0.7})"},
    {"temperature default", "{" U "}", "{" U R"(,"temperature":1})"},
    {"top_p default", "{" U "}", "{" U R"(,"top_p":1})"},
    {"top_k default", "{" U "}", "{" U R"(,"top_k":0})"},
    {"n default", "{" U "}", "{" U R"(,"n":1})"},
    {"seed default equals injected seed", "{" U "}", "{" U R"(,"seed":42})"},
    {"max_tokens default equals effective limit", "{" U "}", "{" U R"(,"max_tokens":256})"},
    {"max_tokens vs max_completion_tokens", "{" U R"(,"max_tokens":9})", "{" U R"(,"max_completion_tokens":9})"},
    {"stop default", "{" U "}", "{" U R"(,"stop":[]})"},
    {"stop order and duplicates", "{" U R"(,"stop":["b","a"]})", "{" U R"(,"stop":["a","b","a"]})"},
    {"stop string vs one-element list", "{" U R"(,"stop":"x"})", "{" U R"(,"stop":["x"]})"},
    {"penalties default", "{" U "}", "{" U R"(,"presence_penalty":0,"frequency_penalty":0.0})"},
    {"logit_bias default", "{" U "}", "{" U R"(,"logit_bias":{}})"},
    {"logit_bias order", "{" U R"(,"logit_bias":{"10":1,"9":-1}})", "{" U R"(,"logit_bias":{"9":-1,"10":1.0}})"},
    {"logit_bias leading zero id", "{" U R"(,"logit_bias":{"7":5}})", "{" U R"(,"logit_bias":{"007":5}})"},
    {"logprobs default", "{" U "}", "{" U R"(,"logprobs":false})"},
    {"top_logprobs default", "{" U R"(,"logprobs":true})", "{" U R"(,"logprobs":true,"top_logprobs":0})"},
    {"text parts vs joined string", R"({"messages":[{"role":"user","content":"Hello world"}]})",
     R"({"messages":[{"role":"user","content":[{"type":"text","text":"Hello "},{"type":"text","text":"world"}]}]})"},
    {"temperature 0: seed ignored", "{" U R"(,"temperature":0,"seed":1})", "{" U R"(,"temperature":0,"seed":2})"},
    {"temperature 0: absent vs given seed", "{" U R"(,"temperature":0})", "{" U R"(,"temperature":0,"seed":99})"},
    {"temperature 0: top_p and top_k ignored", "{" U R"(,"temperature":0,"top_p":0.1,"top_k":5})",
     "{" U R"(,"temperature":0.0})"},
    {"cache object ignored", "{" U "}", "{" U R"(,"cache":{"no-cache":true,"ttl":60}})"},
    {"stream ignored", "{" U "}", "{" U R"(,"stream":true,"stream_options":{"include_usage":true}})"},
    {"user ignored", "{" U "}", "{" U R"(,"user":"alice"})"},
    {"metadata and store ignored", "{" U "}", "{" U R"(,"metadata":{"a":"b"},"store":true})"},
    {"unknown field ignored", "{" U "}", "{" U R"(,"x_trace_id":"123"})"},
    {"null optional fields", "{" U "}", "{" U R"(,"temperature":null,"seed":null,"stop":null,"tools":null})"},
    {"null name vs absent", "{" U "}", R"({"messages":[{"role":"user","content":"hi","name":null}]})"},
    {"message field order", R"({"messages":[{"role":"user","content":"hi"}]})",
     R"({"messages":[{"content":"hi","role":"user"}]})"},
    {"unicode escapes", R"({"messages":[{"role":"user","content":"caf\u00e9"}]})",
     "{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xc3\xa9\"}]}"},
    {"negative seed is its two's complement", "{" U R"(,"seed":-1})", "{" U R"(,"seed":18446744073709551615})"},
    {"seed 7 vs 7.0", "{" U R"(,"seed":7})", "{" U R"(,"seed":7.0})"},
    {"assistant tool_calls: key order, null vs absent content",
     R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
     R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"type":"function","id":"c"}]}]})"},
    {"tool parameters key order",
     "{" U R"(,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]})",
     "{" U R"(,"tools":[{"function":{"parameters":{"properties":{},"type":"object"},"name":"f"},"type":"function"}]})"},
    {"tool_call_id on user message ignored", "{" U "}",
     R"({"messages":[{"role":"user","content":"hi","tool_call_id":"z"}]})"},
    {"-0.0 vs 0 temperature", "{" U R"(,"temperature":-0.0})", "{" U R"(,"temperature":0})"},
    {"model as the default", "{" U "}", "{" U R"(,"model":"tiny"})"},
};

class KeyEquality : public ::testing::TestWithParam<SamePair> {};

TEST_P(KeyEquality, SameKey) {
  const SamePair& p = GetParam();
  KeyResult a = key_of(p.a), b = key_of(p.b);
  EXPECT_EQ(a.canonical, b.canonical) << p.what;
  EXPECT_EQ(a.key, b.key) << p.what;
  EXPECT_EQ(a.key.size(), 64u);
}

INSTANTIATE_TEST_SUITE_P(Table, KeyEquality, ::testing::ValuesIn(kSame),
                         [](const ::testing::TestParamInfo<SamePair>& info) {
                           return testing_support::case_name(info.index, info.param.what);
                         });

TEST(KeyEqualityTable, HasAtLeastTwentyPairs) { EXPECT_GE(std::size(kSame), 20u); }

}  // namespace
}  // namespace reprox::policy
