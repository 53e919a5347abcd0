#include <gtest/gtest.h>

#include "tests/policies/key_test_util.hpp"
#include "policies/tenant.hpp"

namespace reprox::policy {
namespace {

using testing::base_context;
using testing::key_of;

TEST(CanonicalKey, GoldenCanonicalForm) {
  KeyResult k = key_of(
      R"({"model":"tiny","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
          "temperature":0.5,"stop":["z","y","z"],"logit_bias":{"10":1,"9":-2.5},"user":"u","stream":true})");
  EXPECT_EQ(k.canonical,
            R"({"fp":"fp_0123456789abcdef","frequency_penalty":0,"logit_bias":{"10":1,"9":-2.5},"logprobs":false,)"
            R"("max_tokens":256,"messages":[{"content":"ab","role":"user"}],"model":"tiny","n":1,"ns":"",)"
            R"("presence_penalty":0,"seed":42,"stop":["y","z"],"temperature":0.5,"tenant":"tenant-a","top_k":0,)"
            R"("top_logprobs":0,"top_p":1,"v":1})");
  EXPECT_EQ(k.key, sha256_hex(k.canonical));
  EXPECT_EQ(k.seed, 42u);
  EXPECT_TRUE(k.seed_injected);
}

TEST(CanonicalKey, KeyIsLowercaseHex) {
  KeyResult k = key_of(R"({"messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(k.key.size(), 64u);
  for (char c : k.key) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << k.key;
}

TEST(CanonicalKey, TemperatureZeroDropsSeedTopPTopKButReportsSeed) {
  KeyResult k = key_of(R"({"messages":[{"role":"user","content":"hi"}],"temperature":0,"seed":9,"top_p":0.5})");
  EXPECT_EQ(k.canonical.find("\"seed\""), std::string::npos) << k.canonical;
  EXPECT_EQ(k.canonical.find("\"top_p\""), std::string::npos) << k.canonical;
  EXPECT_EQ(k.canonical.find("\"top_k\""), std::string::npos) << k.canonical;
  EXPECT_NE(k.canonical.find("\"temperature\":0"), std::string::npos) << k.canonical;
  EXPECT_EQ(k.seed, 9u);
  EXPECT_FALSE(k.seed_injected);

  KeyResult injected = key_of(R"({"messages":[{"role":"user","content":"hi"}],"temperature":0})");
  EXPECT_EQ(injected.seed, 42u);
  EXPECT_TRUE(injected.seed_injected);
}

TEST(CanonicalKey, GivenSeedIsNotInjected) {
  KeyResult k = key_of(R"({"messages":[{"role":"user","content":"hi"}],"seed":42})");
  EXPECT_EQ(k.seed, 42u);
  EXPECT_FALSE(k.seed_injected);
  KeyResult big = key_of(R"({"messages":[{"role":"user","content":"hi"}],"seed":-2})");
  EXPECT_EQ(big.seed, UINT64_MAX - 1);
  EXPECT_NE(big.canonical.find("\"seed\":18446744073709551614"), std::string::npos) << big.canonical;
}

TEST(CanonicalKey, LeavesOutNonAnswerFields) {
  KeyResult k = key_of(R"({"messages":[{"role":"user","content":"hi"}],"stream":true,
      "stream_options":{"include_usage":true},"user":"secret-user","metadata":{"m":"secret-meta"},"store":true,
      "cache":{"namespace":"secret-ns"},"x_unknown":"secret-x"})");
  for (const char* s : {"stream", "include_usage", "secret-user", "secret-meta", "store", "cache", "secret-ns",
                        "x_unknown", "secret-x"})
    EXPECT_EQ(k.canonical.find(s), std::string::npos) << s << " in " << k.canonical;
}

// For an upstream, which gets the client's body, a field reprox does not
// know may change the answer: it is keyed, under `other`, with the fields
// that never change an answer still left out. The embedded engine ignores
// such fields, so they stay out of its keys (above).
TEST(CanonicalKey, OtherFieldsAreKeyedForAnUpstream) {
  KeyContext upstream = base_context();
  upstream.key_other_fields = true;
  const std::string base = R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"user":"secret-user",)"
                           R"("metadata":{"m":"secret-meta"},"max_completion_tokens":9)";
  const KeyResult plain = testing::key_in(base + "}", upstream);
  EXPECT_EQ(plain.canonical.find("\"other\""), std::string::npos) << plain.canonical;
  EXPECT_EQ(plain.key, key_of(base + "}").key) << "no unknown field: the same key as before";

  const KeyResult high = testing::key_in(base + R"(,"reasoning_effort":"high","parallel_tool_calls":false})", upstream);
  const KeyResult low = testing::key_in(base + R"(,"reasoning_effort":"low","parallel_tool_calls":false})", upstream);
  EXPECT_NE(high.key, low.key);
  EXPECT_NE(high.canonical.find(R"("other":{"parallel_tool_calls":false,"reasoning_effort":"high"})"),
            std::string::npos)
      << high.canonical;
  for (const char* s : {"secret-user", "secret-meta", "stream", "max_completion_tokens"})
    EXPECT_EQ(high.canonical.find(s), std::string::npos) << s << " in " << high.canonical;
  // Member order and number spelling do not matter.
  const KeyResult reordered =
      testing::key_in(base + R"(,"parallel_tool_calls":false,"reasoning_effort":"high"})", upstream);
  EXPECT_EQ(reordered.key, high.key);
  EXPECT_EQ(testing::key_in(base + R"(,"x_level":1.0})", upstream).key,
            testing::key_in(base + R"(,"x_level":1})", upstream).key);
  // The engine's keys ignore them.
  EXPECT_EQ(key_of(base + R"(,"reasoning_effort":"high"})").key, key_of(base + R"(,"reasoning_effort":"low"})").key);
}

// Template variables change the prompt: keyed by name for every backend,
// and absent from the canonical form when not sent.
TEST(CanonicalKey, ChatTemplateKwargsAreKeyedByName) {
  const std::string base = R"({"messages":[{"role":"user","content":"hi"}])";
  const KeyResult plain = key_of(base + "}");
  EXPECT_EQ(plain.canonical.find("chat_template_kwargs"), std::string::npos) << plain.canonical;
  EXPECT_EQ(key_of(base + R"(,"chat_template_kwargs":null})").key, plain.key);
  const KeyResult off = key_of(base + R"(,"chat_template_kwargs":{"enable_thinking":false}})");
  const KeyResult on = key_of(base + R"(,"chat_template_kwargs":{"enable_thinking":true}})");
  EXPECT_NE(off.key, plain.key);
  EXPECT_NE(off.key, on.key);
  EXPECT_NE(off.canonical.find(R"("chat_template_kwargs":{"enable_thinking":false})"), std::string::npos)
      << off.canonical;
  KeyContext upstream = base_context();
  upstream.key_other_fields = true;
  const KeyResult forwarded = testing::key_in(base + R"(,"chat_template_kwargs":{"enable_thinking":false}})", upstream);
  EXPECT_EQ(forwarded.canonical.find("\"other\""), std::string::npos) << forwarded.canonical;
  EXPECT_EQ(forwarded.key, off.key);
}

// min_p and repetition_penalty are keyed by name only when not neutral, so
// that keys of requests without them are unchanged; min_p not when greedy.
TEST(CanonicalKey, MinPAndRepetitionPenaltyOnlyWhenNotNeutral) {
  const std::string base = R"({"messages":[{"role":"user","content":"hi"}])";
  const KeyResult plain = key_of(base + "}");
  EXPECT_EQ(key_of(base + R"(,"min_p":0,"repetition_penalty":1})").key, plain.key);
  const KeyResult min_p = key_of(base + R"(,"min_p":0.1})");
  const KeyResult penalty = key_of(base + R"(,"repetition_penalty":1.2})");
  EXPECT_NE(min_p.key, plain.key);
  EXPECT_NE(penalty.key, plain.key);
  EXPECT_NE(min_p.canonical.find(R"("min_p":0.1)"), std::string::npos) << min_p.canonical;
  EXPECT_NE(penalty.canonical.find(R"("repetition_penalty":1.2)"), std::string::npos) << penalty.canonical;
  EXPECT_EQ(key_of(base + R"(,"temperature":0,"min_p":0.1})").key, key_of(base + R"(,"temperature":0})").key);
  EXPECT_NE(key_of(base + R"(,"temperature":0,"repetition_penalty":1.2})").key,
            key_of(base + R"(,"temperature":0})").key);
}

// How a choice ends and how the prompt is rendered (vLLM's extensions):
// keyed by name when not neutral; stop_token_ids as a set.
TEST(CanonicalKey, StopAndPromptControlsOnlyWhenNotNeutral) {
  const std::string base = R"({"messages":[{"role":"user","content":"hi"}])";
  const KeyResult plain = key_of(base + "}");
  EXPECT_EQ(key_of(base + R"(,"min_tokens":0,"ignore_eos":false,"stop_token_ids":[],)"
                          R"("include_stop_str_in_output":false,"skip_special_tokens":true})")
                .key,
            plain.key);
  EXPECT_EQ(key_of(base + R"(,"add_generation_prompt":true,"continue_final_message":false})").key, plain.key);
  EXPECT_EQ(key_of(base + R"(,"allowed_token_ids":[],"bad_words":[],"return_tokens_as_token_ids":false})").key,
            plain.key);
  EXPECT_EQ(key_of(base + R"(,"bad_words":["b","a","b"]})").key, key_of(base + R"(,"bad_words":["a","b"]})").key);
  EXPECT_EQ(key_of(base + R"(,"guided_choice":["no","yes","no"]})").key,
            key_of(base + R"(,"guided_choice":["yes","no"]})").key);
  EXPECT_NE(key_of(base + R"(,"guided_choice":["yes","no"]})").key,
            key_of(base + R"(,"guided_choice":["yes","nope"]})").key);
  for (const char* member : {R"("min_tokens":3)", R"("ignore_eos":true)", R"("stop_token_ids":[7,2])",
                             R"("include_stop_str_in_output":true)", R"("skip_special_tokens":false)",
                             R"("add_generation_prompt":false)", R"("allowed_token_ids":[5])",
                             R"("bad_words":["no"])", R"("truncate_prompt_tokens":-1)",
                             R"("return_tokens_as_token_ids":true)", R"("guided_choice":["a"])",
                             R"("guided_json":{"type":"object"})"}) {
    const KeyResult k = key_of(base + "," + member + "}");
    EXPECT_NE(k.key, plain.key) << member;
  }
  EXPECT_NE(key_of(base + R"(,"add_generation_prompt":false,"continue_final_message":true})").key,
            key_of(base + R"(,"add_generation_prompt":false})").key);
  const KeyResult ids = key_of(base + R"(,"stop_token_ids":[7,2,7]})");
  EXPECT_EQ(ids.key, key_of(base + R"(,"stop_token_ids":[2,7]})").key);
  EXPECT_NE(ids.canonical.find(R"("stop_token_ids":[2,7])"), std::string::npos) << ids.canonical;
  // Upstream keys hold them by name too, not among the other fields.
  KeyContext upstream = base_context();
  upstream.key_other_fields = true;
  const KeyResult forwarded = testing::key_in(base + R"(,"ignore_eos":true})", upstream);
  EXPECT_EQ(forwarded.canonical.find("\"other\""), std::string::npos) << forwarded.canonical;
  EXPECT_EQ(forwarded.key, key_of(base + R"(,"ignore_eos":true})").key);
}

TEST(CanonicalKey, AbsentMessageFieldsAreOmittedNotNull) {
  KeyResult k = key_of(
      R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]})");
  EXPECT_EQ(k.canonical.find("null"), std::string::npos) << k.canonical;
  EXPECT_EQ(k.canonical.find("\"name\":\"f\""), k.canonical.rfind("\"name\":\"f\""));
  EXPECT_NE(k.canonical.find("\"tool_calls\":[{"), std::string::npos) << k.canonical;
}

TEST(CanonicalKey, ToolsAndFormatOnlyWhenPresent) {
  KeyResult plain = key_of(R"({"messages":[{"role":"user","content":"x"}]})");
  for (const char* s : {"tools", "tool_choice", "response_format", "functions", "function_call"})
    EXPECT_EQ(plain.canonical.find(s), std::string::npos) << s;
  KeyResult with = key_of(R"({"messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","response_format":{"type":"text"}})");
  for (const char* s : {"\"tools\":[", "\"tool_choice\":\"auto\"", "\"response_format\":{\"type\":\"text\"}"})
    EXPECT_NE(with.canonical.find(s), std::string::npos) << s << " in " << with.canonical;
}

TEST(CanonicalKey, PureAndRepeatable) {
  const std::string body = R"({"messages":[{"role":"user","content":"hi"}],"temperature":0.3})";
  EXPECT_EQ(key_of(body).key, key_of(body).key);
}

TEST(CanonicalKey, EffectiveMaxTokensComesFromTheRequestFirst) {
  api::ChatRequest r;
  EXPECT_EQ(effective_max_tokens(r, 100), 100);
  r.max_tokens = 7;
  EXPECT_EQ(effective_max_tokens(r, 100), 7);
}

}  // namespace
}  // namespace reprox::policy
