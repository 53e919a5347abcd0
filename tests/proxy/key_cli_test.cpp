#include <gtest/gtest.h>

#include <sstream>

#include "tests/policies/key_test_util.hpp"
#include "proxy/key_cli.hpp"
#include "common/json.hpp"

namespace reprox::policy {
namespace {

using testing::base_context;

json::Value run(const std::string& body, int expected_rc, const KeyContext& ctx = base_context()) {
  std::istringstream in(body);
  std::ostringstream out;
  EXPECT_EQ(run_key_cli(in, out, ctx), expected_rc) << body;
  json::Value v;
  EXPECT_FALSE(json::parse(out.str(), v)) << out.str();
  return v;
}

TEST(KeyCli, PrintsTheExplainObject) {
  const std::string body = R"({"messages":[{"role":"user","content":"hi"}],"seed":5})";
  json::Value v = run(body, 0);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.find("key")->as_string(), testing::key_of(body).key);
  EXPECT_EQ(v.find("canonical")->as_string(), testing::key_of(body).canonical);
  EXPECT_EQ(v.find("seed")->as_uint(), 5u);
  EXPECT_FALSE(v.find("seed_injected")->as_bool());
  EXPECT_TRUE(v.find("cacheable")->as_bool());
  EXPECT_EQ(v.find("reason")->as_string(), "cacheable");
}

TEST(KeyCli, InjectsDefaultsFromContext) {
  KeyContext ctx = base_context();
  ctx.default_seed = 1234;
  json::Value v = run(R"({"messages":[{"role":"user","content":"hi"}],"cache":{"namespace":"n1","no-store":true}})",
                      0, ctx);
  EXPECT_EQ(v.find("seed")->as_uint(), 1234u);
  EXPECT_TRUE(v.find("seed_injected")->as_bool());
  EXPECT_FALSE(v.find("cacheable")->as_bool());
  const std::string& canonical = v.find("canonical")->as_string();
  EXPECT_NE(canonical.find("\"ns\":\"n1\""), std::string::npos) << canonical;
  EXPECT_NE(canonical.find("\"max_tokens\":256"), std::string::npos) << canonical;
  EXPECT_NE(canonical.find("\"model\":\"tiny\""), std::string::npos) << canonical;
}

TEST(KeyCli, InvalidInputExitsTwoWithOpenAIError) {
  json::Value v = run(R"({"messages":[{"role":"user","content":"hi"}],"temperature":"hot"})", 2);
  const json::Value* err = v.find("error");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->find("param")->as_string(), "temperature");
  EXPECT_EQ(err->find("type")->as_string(), "invalid_request_error");

  json::Value garbage = run("{not json", 2);
  ASSERT_NE(garbage.find("error"), nullptr);
  EXPECT_TRUE(garbage.find("error")->find("param")->is_null());
}

}  // namespace
}  // namespace reprox::policy
