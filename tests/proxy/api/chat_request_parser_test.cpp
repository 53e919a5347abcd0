// What a valid body turns into.
#include <gtest/gtest.h>

#include "proxy/api/chat_request_parser.hpp"

namespace reprox::api {
namespace {

ChatRequest parse_ok(const std::string& body) {
  ParseResult r = parse_chat_request(body);
  EXPECT_TRUE(r.ok()) << body << " -> " << r.error.to_json();
  return r.ok() ? *r.request : ChatRequest{};
}

TEST(ChatRequestParser, MinimalBodyGetsOpenAIDefaults) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].role, "user");
  EXPECT_EQ(r.messages[0].content.as_string(), "hi");
  EXPECT_FALSE(r.messages[0].name);
  EXPECT_TRUE(r.messages[0].tool_calls.is_null());
  EXPECT_EQ(r.model, "");
  EXPECT_EQ(r.temperature, 1.0);
  EXPECT_EQ(r.top_p, 1.0);
  EXPECT_EQ(r.top_k, 0);
  EXPECT_FALSE(r.seed);
  EXPECT_EQ(r.n, 1);
  EXPECT_FALSE(r.max_tokens);
  EXPECT_TRUE(r.stop.empty());
  EXPECT_FALSE(r.logprobs);
  EXPECT_FALSE(r.stream);
  EXPECT_TRUE(r.tools.is_null());
  EXPECT_TRUE(r.response_format.is_null());
  EXPECT_FALSE(r.cache.no_cache);
  EXPECT_FALSE(r.cache.no_store);
}

TEST(ChatRequestParser, ReadsEveryField) {
  ChatRequest r = parse_ok(R"({
    "model":"tiny","messages":[
      {"role":"system","content":"be brief"},
      {"role":"user","content":"hi","name":"bob"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
      {"role":"tool","content":"42","tool_call_id":"c1"}],
    "temperature":0.5,"top_p":0.9,"top_k":40,"seed":7,"n":3,"max_tokens":16,"stop":["b","a"],
    "presence_penalty":0.25,"frequency_penalty":-0.5,"logit_bias":{"50":-100,"7":2.5},
    "logprobs":true,"top_logprobs":5,"stream":true,"stream_options":{"include_usage":true},
    "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
    "tool_choice":"auto","response_format":{"type":"json_object"},"user":"u1",
    "cache":{"no-cache":true,"ttl":60,"namespace":"team"}})");
  EXPECT_EQ(r.model, "tiny");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(*r.messages[1].name, "bob");
  EXPECT_TRUE(r.messages[2].content.is_null());
  EXPECT_TRUE(r.messages[2].tool_calls.is_array());
  EXPECT_EQ(*r.messages[3].tool_call_id, "c1");
  EXPECT_EQ(r.temperature, 0.5);
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.top_k, 40);
  EXPECT_EQ(*r.seed, 7u);
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(*r.max_tokens, 16);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(r.presence_penalty, 0.25);
  EXPECT_EQ(r.frequency_penalty, -0.5);
  ASSERT_EQ(r.logit_bias.size(), 2u);
  EXPECT_EQ(r.logit_bias[0], (std::pair<int64_t, double>{7, 2.5}));
  EXPECT_EQ(r.logit_bias[1], (std::pair<int64_t, double>{50, -100}));
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 5);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.tools.is_array());
  EXPECT_EQ(r.tool_choice.as_string(), "auto");
  EXPECT_TRUE(r.response_format.is_object());
  EXPECT_EQ(r.user, "u1");
  EXPECT_TRUE(r.cache.no_cache);
  EXPECT_FALSE(r.cache.no_store);
  EXPECT_EQ(*r.cache.ttl_seconds, 60);
  EXPECT_EQ(*r.cache.ns, "team");
}

TEST(ChatRequestParser, NullMeansAbsent) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"hi","name":null}],"model":null,
    "temperature":null,"top_p":null,"seed":null,"n":null,"max_tokens":null,"stop":null,"logit_bias":null,
    "logprobs":null,"top_logprobs":null,"stream":null,"stream_options":null,"tools":null,"tool_choice":null,
    "response_format":null,"user":null,"cache":null})");
  EXPECT_FALSE(r.messages[0].name);
  EXPECT_EQ(r.temperature, 1.0);
  EXPECT_FALSE(r.seed);
  EXPECT_FALSE(r.max_tokens);
  EXPECT_TRUE(r.tools.is_null());
}

TEST(ChatRequestParser, TextOnlyPartsAreJoinedIntoOneString) {
  ChatRequest r = parse_ok(
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}]}]})");
  ASSERT_TRUE(r.messages[0].content.is_string());
  EXPECT_EQ(r.messages[0].content.as_string(), "Hello, world");
}

TEST(ChatRequestParser, MixedPartsAreKeptWhole) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}]})");
  ASSERT_TRUE(r.messages[0].content.is_array());
  EXPECT_EQ(r.messages[0].content.as_array().size(), 2u);
  EXPECT_EQ(r.messages[0].text(), "what is this?");
}

TEST(ChatRequestParser, AnAssistantsRefusalPartsAreItsText) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[
      {"type":"text","text":"I "},{"type":"refusal","refusal":"cannot."}]}]})");
  ASSERT_TRUE(r.messages[1].content.is_array());
  EXPECT_EQ(r.messages[1].text(), "I cannot.");
}

TEST(ChatRequestParser, AssistantRefusalAndLegacyFunctionCall) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}},
      {"role":"function","name":"f","content":"1"},
      {"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}],
      "functions":[{"name":"f"}],"function_call":"auto"})");
  EXPECT_TRUE(r.messages[1].function_call.is_object());
  EXPECT_TRUE(r.messages[3].content.is_array());
}

TEST(ChatRequestParser, MaxCompletionTokensWinsOverMaxTokens) {
  EXPECT_EQ(*parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":10,"max_completion_tokens":20})")
                 .max_tokens,
            20);
  EXPECT_EQ(*parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":10})").max_tokens, 10);
  EXPECT_EQ(*parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1e1})").max_tokens, 10);
}

TEST(ChatRequestParser, SeedCoversInt64AndUint64) {
  auto seed_of = [](const std::string& s) {
    return *parse_ok(R"({"messages":[{"role":"user","content":"x"}],"seed":)" + s + "}").seed;
  };
  EXPECT_EQ(seed_of("0"), 0u);
  EXPECT_EQ(seed_of("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(seed_of("-1"), UINT64_MAX);  // two's complement
  EXPECT_EQ(seed_of("-9223372036854775808"), uint64_t{1} << 63);
  EXPECT_EQ(seed_of("1e3"), 1000u);
  EXPECT_EQ(seed_of("7.0"), 7u);
}

TEST(ChatRequestParser, StopStringBecomesOneEntry) {
  EXPECT_EQ(parse_ok(R"({"messages":[{"role":"user","content":"x"}],"stop":"\n"})").stop,
            std::vector<std::string>{"\n"});
}

TEST(ChatRequestParser, BoundariesAreInclusive) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"temperature":2,"top_p":0,"n":128,
      "presence_penalty":-2,"frequency_penalty":2,"logit_bias":{"0":-100,"1":100},"logprobs":true,"top_logprobs":20})");
  EXPECT_EQ(r.temperature, 2.0);
  EXPECT_EQ(r.top_p, 0.0);
  EXPECT_EQ(r.n, 128);
  EXPECT_EQ(r.top_logprobs, 20);
  ChatRequest zero = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"temperature":0,"top_logprobs":null})");
  EXPECT_EQ(zero.temperature, 0.0);
}

TEST(ChatRequestParser, UnknownFieldsAreKeptInRaw) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"service_tier":"auto","x_custom":{"a":1}})");
  ASSERT_NE(r.raw.find("service_tier"), nullptr);
  EXPECT_EQ(r.raw.find("service_tier")->as_string(), "auto");
  EXPECT_NE(r.raw.find("x_custom"), nullptr);
}

TEST(ChatRequestParser, CacheObjectAcceptsUnderscoreSpellings) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"cache":{"no_cache":true,"no_store":true}})");
  EXPECT_TRUE(r.cache.no_cache);
  EXPECT_TRUE(r.cache.no_store);
  ChatRequest off = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"cache":{"no-cache":false,"ttl":0}})");
  EXPECT_FALSE(off.cache.no_cache);
  EXPECT_EQ(*off.cache.ttl_seconds, 0);
}

TEST(ChatRequestParser, ToolCallIdOnNonToolMessageIsIgnored) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x","tool_call_id":"c9"}]})");
  EXPECT_FALSE(r.messages[0].tool_call_id);
}

TEST(ChatRequestParser, DuplicateKeysLastWins) {
  ChatRequest r = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"temperature":5,"temperature":0.5})");
  EXPECT_EQ(r.temperature, 0.5);
}

}  // namespace
}  // namespace reprox::api
