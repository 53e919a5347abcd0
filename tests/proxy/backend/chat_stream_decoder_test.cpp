#include "proxy/backend/chat_stream_decoder.hpp"

#include <gtest/gtest.h>

namespace reprox::backend {
namespace {

std::vector<GenEvent> apply_ok(ChatStreamDecoder& d, const std::string& chunk) {
  std::vector<GenEvent> out;
  std::string error;
  EXPECT_TRUE(d.apply_chunk(chunk, out, &error)) << error;
  return out;
}

std::string apply_err(ChatStreamDecoder& d, const std::string& chunk) {
  std::vector<GenEvent> out;
  std::string error;
  EXPECT_FALSE(d.apply_chunk(chunk, out, &error)) << chunk;
  return error;
}

TEST(ChatStreamDecoder, RoleOnlyChunkIsSkippedAndContentPasses) {
  ChatStreamDecoder d(1);
  EXPECT_TRUE(apply_ok(d, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})").empty());
  auto ev = apply_ok(d, R"({"system_fingerprint":"fp_up","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].choice, 0u);
  EXPECT_EQ(ev[0].delta.content, "Hi");
  EXPECT_EQ(ev[0].delta.extra, "");
  EXPECT_EQ(ev[0].delta.logprobs, "");
  EXPECT_EQ(ev[0].finish_reason, "");
  EXPECT_FALSE(d.all_finished());
  EXPECT_EQ(d.fingerprint(), "fp_up");
  ev = apply_ok(d, R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].finish_reason, "stop");
  EXPECT_TRUE(d.all_finished());
}

TEST(ChatStreamDecoder, ExtraMembersAndLogprobsAreKeptRaw) {
  ChatStreamDecoder d(1);
  auto ev = apply_ok(d, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":""}}],"reasoning_content":"hm"},"logprobs":{"content":[{"token":"a","logprob":-0.5},{"token":"b","logprob":-1}]},"finish_reason":null}]})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].delta.content, "");
  EXPECT_EQ(ev[0].delta.extra,
            R"("tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":""}}],"reasoning_content":"hm")");
  EXPECT_EQ(ev[0].delta.logprobs, R"({"token":"a","logprob":-0.5},{"token":"b","logprob":-1})");
}

TEST(ChatStreamDecoder, SeveralChoicesInOneChunkGiveOneEventEachInOrder) {
  ChatStreamDecoder d(2);
  auto ev = apply_ok(d, R"({"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]})");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].choice, 1u);
  EXPECT_EQ(ev[0].delta.content, "b");
  EXPECT_EQ(ev[1].choice, 0u);
  EXPECT_EQ(ev[1].finish_reason, "length");
  EXPECT_EQ(d.first_unfinished(), 1u);
}

TEST(ChatStreamDecoder, UsageChunk) {
  ChatStreamDecoder d(1);
  EXPECT_FALSE(d.has_usage());
  EXPECT_TRUE(apply_ok(d, R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":8}}})").empty());
  EXPECT_TRUE(d.has_usage());
  EXPECT_EQ(d.usage().prompt_tokens, 12);
  EXPECT_EQ(d.usage().completion_tokens, 5);
  EXPECT_EQ(d.usage().cached_tokens, 8);
  apply_ok(d, R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":null}})");
  EXPECT_EQ(d.usage().cached_tokens, 0);
}

TEST(ChatStreamDecoder, MalformedInputIsAnError) {
  ChatStreamDecoder d(2);
  EXPECT_NE(apply_err(d, "{not json").find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(apply_err(d, "[1,2]").empty());
  EXPECT_NE(apply_err(d, R"({"choices":[{"index":2,"delta":{"content":"x"}}]})").find("index 2"), std::string::npos);
  EXPECT_FALSE(apply_err(d, R"({"choices":[{"index":0,"delta":{"content":5}}]})").empty());
  EXPECT_FALSE(apply_err(d, R"({"choices":{"index":0}})").empty());
  EXPECT_NE(apply_err(d, R"({"error":{"message":"engine died","type":"server_error"}})").find("engine died"), std::string::npos);
}

TEST(ChatStreamDecoder, OutputAfterFinishIsAnErrorButEmptyChunksAreNot) {
  ChatStreamDecoder d(1);
  apply_ok(d, R"({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]})");
  EXPECT_TRUE(apply_ok(d, R"({"choices":[{"index":0,"delta":{}}]})").empty());
  EXPECT_NE(apply_err(d, R"({"choices":[{"index":0,"delta":{"content":"y"}}]})").find("after it finished"), std::string::npos);
}

TEST(ChatStreamDecoder, WholeResponse) {
  ChatStreamDecoder d(2);
  std::vector<GenEvent> out;
  std::string error;
  ASSERT_TRUE(d.apply_full_response(R"({"id":"x","object":"chat.completion","system_fingerprint":"fp_w","choices":[
      {"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"},
      {"index":1,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],
      "usage":{"prompt_tokens":3,"completion_tokens":4}})", out, &error)) << error;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].delta.content, "Hello");
  EXPECT_EQ(out[0].finish_reason, "stop");
  EXPECT_EQ(out[1].choice, 1u);
  EXPECT_EQ(out[1].delta.extra, R"("tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}])");
  EXPECT_EQ(out[1].finish_reason, "tool_calls");
  EXPECT_TRUE(d.all_finished());
  EXPECT_EQ(d.usage().completion_tokens, 4);
  EXPECT_EQ(d.fingerprint(), "fp_w");

  ChatStreamDecoder bad(1);
  EXPECT_FALSE(bad.apply_full_response(R"({"object":"error"})", out, &error));
  EXPECT_FALSE(bad.apply_full_response("<html>", out, &error));
}

}  // namespace
}  // namespace reprox::backend
