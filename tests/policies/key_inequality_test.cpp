// Changing any one answer-changing field, or the tenant, namespace, model or
// fingerprint, must change the key.
#include <gtest/gtest.h>

#include <functional>

#include "tests/policies/key_test_util.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy {
namespace {

using testing::base_context;
using testing::key_in;
using testing::key_of;

struct DiffPair {
  const char* what;
  const char* a;
  const char* b;
};

#define U R"("messages":[{"role":"user","content":"hi"}])"
#define TC(args) \
  R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":")" args R"("}}]}]})"
#define TOOL(fn) R"(,"tools":[{"type":"function","function":{"name":")" fn R"("}}])"

const DiffPair kDiff[] = {
    {"content", "{" U "}", R"({"messages":[{"role":"user","content":"hi!"}]})"},
    {"content whitespace", "{" U "}", R"({"messages":[{"role":"user","content":"hi "}]})"},
    {"role", "{" U "}", R"({"messages":[{"role":"system","content":"hi"}]})"},
    {"name", "{" U "}", R"({"messages":[{"role":"user","content":"hi","name":"bob"}]})"},
    {"name value", R"({"messages":[{"role":"user","content":"hi","name":"bob"}]})",
     R"({"messages":[{"role":"user","content":"hi","name":"ann"}]})"},
    {"extra message", "{" U "}", R"({"messages":[{"role":"system","content":""},{"role":"user","content":"hi"}]})"},
    {"message order", R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]})",
     R"({"messages":[{"role":"user","content":"b"},{"role":"user","content":"a"}]})"},
    {"tool_calls arguments", TC("{}"), TC("{\\\"a\\\":1}")},
    {"tool_call_id",
     R"({"messages":[{"role":"tool","content":"1","tool_call_id":"a"}]})",
     R"({"messages":[{"role":"tool","content":"1","tool_call_id":"b"}]})"},
    {"text vs text+image",
     R"({"messages":[{"role":"user","content":"look"}]})",
     R"({"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"u"}}]}]})"},
    {"legacy function_call message",
     R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}]})",
     R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"function_call":{"name":"g","arguments":"{}"}}]})"},
    {"temperature", "{" U R"(,"temperature":0.7})", "{" U R"(,"temperature":0.8})"},
    {"temperature 0 vs tiny", "{" U R"(,"temperature":0})", "{" U R"(,"temperature":1e-9})"},
    {"top_p", "{" U "}", "{" U R"(,"top_p":0.9})"},
    {"top_k", "{" U "}", "{" U R"(,"top_k":40})"},
    {"seed", "{" U R"(,"seed":1})", "{" U R"(,"seed":2})"},
    {"seed vs injected default", "{" U "}", "{" U R"(,"seed":43})"},
    {"n", "{" U "}", "{" U R"(,"n":2})"},
    {"max_tokens", "{" U R"(,"max_tokens":10})", "{" U R"(,"max_tokens":11})"},
    {"stop set", "{" U R"(,"stop":["a"]})", "{" U R"(,"stop":["a","b"]})"},
    {"stop present", "{" U "}", "{" U R"(,"stop":"\n"})"},
    {"presence_penalty", "{" U "}", "{" U R"(,"presence_penalty":0.5})"},
    {"frequency_penalty", "{" U "}", "{" U R"(,"frequency_penalty":-0.5})"},
    {"logit_bias value", "{" U R"(,"logit_bias":{"5":1}})", "{" U R"(,"logit_bias":{"5":2}})"},
    {"logit_bias id", "{" U R"(,"logit_bias":{"5":1}})", "{" U R"(,"logit_bias":{"6":1}})"},
    {"logprobs", "{" U "}", "{" U R"(,"logprobs":true})"},
    {"top_logprobs", "{" U R"(,"logprobs":true,"top_logprobs":1})", "{" U R"(,"logprobs":true,"top_logprobs":2})"},
    {"tools present", "{" U "}", "{" U TOOL("f") "}"},
    {"tools content", "{" U TOOL("f") "}", "{" U TOOL("g") "}"},
    {"tool_choice", "{" U TOOL("f") "}", "{" U TOOL("f") R"(,"tool_choice":"required"})"},
    {"response_format", "{" U "}", "{" U R"(,"response_format":{"type":"json_object"}})"},
    {"response_format type", "{" U R"(,"response_format":{"type":"text"}})",
     "{" U R"(,"response_format":{"type":"json_object"}})"},
    {"legacy functions", "{" U "}", "{" U R"(,"functions":[{"name":"f"}]})"},
    {"model", "{" U R"(,"model":"tiny"})", "{" U R"(,"model":"other"})"},
    {"string escapes matter", R"({"messages":[{"role":"user","content":"a\nb"}]})",
     R"({"messages":[{"role":"user","content":"a\\nb"}]})"},
};

class KeyInequality : public ::testing::TestWithParam<DiffPair> {};

TEST_P(KeyInequality, DifferentKey) {
  const DiffPair& p = GetParam();
  KeyResult a = key_of(p.a), b = key_of(p.b);
  ASSERT_FALSE(a.key.empty());
  ASSERT_FALSE(b.key.empty());
  EXPECT_NE(a.canonical, b.canonical) << p.what;
  EXPECT_NE(a.key, b.key) << p.what;
}

INSTANTIATE_TEST_SUITE_P(Table, KeyInequality, ::testing::ValuesIn(kDiff),
                         [](const ::testing::TestParamInfo<DiffPair>& info) {
                           return testing_support::case_name(info.index, info.param.what);
                         });

TEST(KeyInequalityTable, HasAtLeastTwentyFivePairs) { EXPECT_GE(std::size(kDiff), 25u); }

struct ContextChange {
  const char* what;
  std::function<void(KeyContext&)> change;
};

class KeyContextInequality : public ::testing::TestWithParam<ContextChange> {};

TEST_P(KeyContextInequality, DifferentKey) {
  const std::string body = "{" U "}";
  KeyContext changed = base_context();
  GetParam().change(changed);
  EXPECT_NE(key_in(body, base_context()).key, key_in(body, changed).key) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Context, KeyContextInequality,
    ::testing::Values(ContextChange{"fingerprint", [](KeyContext& c) { c.fingerprint = "fp_fedcba9876543210"; }},
                      ContextChange{"tenant", [](KeyContext& c) { c.tenant = "tenant-b"; }},
                      ContextChange{"no tenant", [](KeyContext& c) { c.tenant = ""; }},
                      ContextChange{"namespace", [](KeyContext& c) { c.ns = "team-x"; }},
                      ContextChange{"resolved model", [](KeyContext& c) { c.model_id = "tiny-2"; }},
                      ContextChange{"injected seed", [](KeyContext& c) { c.default_seed = 7; }},
                      ContextChange{"default max_tokens", [](KeyContext& c) { c.effective_max_tokens = 512; }}),
    [](const ::testing::TestParamInfo<ContextChange>& info) {
      return testing_support::case_name(info.index, info.param.what);
    });

}  // namespace
}  // namespace reprox::policy
