#include "proxy/backend/upstream_request_body.hpp"

#include <gtest/gtest.h>

namespace reprox::backend {
namespace {

json::Value parse(const std::string& text) {
  json::Value v;
  auto err = json::parse(text, v);
  EXPECT_FALSE(err) << err.message;
  return v;
}

TEST(UpstreamRequestBody, RewritesTheClientBody) {
  BackendRequest r;
  r.chat.raw = parse(R"({"model":"alias","messages":[{"role":"user","content":"hi"}],"stream":false,
      "cache":{"no-cache":true},"temperature":0.5,"vendor_extension":{"x":1},"max_tokens":7})");
  r.model_id = "real-model";
  r.seed = 18446744073709551615ull;
  r.max_tokens = 7;
  json::Value body = parse(build_upstream_chat_body(r));
  EXPECT_EQ(body.find("model")->as_string(), "real-model");
  EXPECT_EQ(body.find("seed")->as_uint(), 18446744073709551615ull);
  EXPECT_TRUE(body.find("stream")->as_bool());
  EXPECT_TRUE(body.find("stream_options")->find("include_usage")->as_bool());
  EXPECT_EQ(body.find("cache"), nullptr);
  EXPECT_EQ(body.find("max_tokens")->as_int(), 7);
  EXPECT_EQ(json::dump(*body.find("vendor_extension")), R"({"x":1})");
  EXPECT_EQ(body.find("temperature")->as_double(), 0.5);
}

TEST(UpstreamRequestBody, InventsNoLimit) {
  BackendRequest r;
  r.chat.raw = parse(R"({"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":false}})");
  r.model_id = "m";
  r.seed = 42;
  r.max_tokens = 4096;  // the effective limit for the key; not sent
  json::Value body = parse(build_upstream_chat_body(r));
  EXPECT_EQ(body.find("max_tokens"), nullptr);
  EXPECT_EQ(body.find("max_completion_tokens"), nullptr);
  EXPECT_EQ(body.find("seed")->as_uint(), 42u);
  EXPECT_TRUE(body.find("stream_options")->find("include_usage")->as_bool());
}

TEST(UpstreamRequestBody, RebuildsFromFieldsWithoutRaw) {
  BackendRequest r;
  r.model_id = "m";
  r.seed = 5;
  r.chat.n = 2;
  r.chat.max_tokens = 9;
  r.chat.stop = {"x"};
  api::ChatMessage m;
  m.role = "user";
  m.content = json::Value("hello");
  r.chat.messages.push_back(m);
  json::Value body = parse(build_upstream_chat_body(r));
  EXPECT_EQ(json::dump(*body.find("messages")), R"([{"role":"user","content":"hello"}])");
  EXPECT_EQ(body.find("n")->as_int(), 2);
  EXPECT_EQ(body.find("max_tokens")->as_int(), 9);
  EXPECT_EQ(json::dump(*body.find("stop")), R"(["x"])");
  EXPECT_EQ(body.find("seed")->as_uint(), 5u);
}

}  // namespace
}  // namespace reprox::backend
