// The near-duplicate context key: equal exactly when everything but the
// last user message is equal; never equal to an exact key; absent when the
// conversation does not end with a text user message.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "policies/near_key.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "tests/policies/key_test_util.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy {
namespace {

// As the server keys a request: the body's model resolved, its max_tokens
// (or the default) made the effective limit.
std::optional<NearQuery> query_of(const std::string& body, KeyContext ctx = testing::base_context()) {
  api::ParseResult r = api::parse_chat_request(body);
  EXPECT_TRUE(r.ok()) << body;
  if (!r.ok()) return std::nullopt;
  if (!r.request->model.empty()) ctx.model_id = r.request->model;
  ctx.effective_max_tokens = effective_max_tokens(*r.request, ctx.effective_max_tokens);
  return near_query(*r.request, ctx);
}

std::string body(const std::string& last, const std::string& extra = "", const std::string& system = "Be brief.") {
  return R"({"model":"tiny","messages":[{"role":"system","content":")" + system +
         R"("},{"role":"user","content":")" + last + R"("}])" + extra + "}";
}

TEST(NearKey, OnlyTheLastUserMessageMayDiffer) {
  auto a = query_of(body("How do I reset my password?"));
  auto b = query_of(body("how do i reset my password"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->context_key, b->context_key);
  EXPECT_EQ(a->text, "How do I reset my password?");
  EXPECT_EQ(b->text, "how do i reset my password");
}

struct ContextCase {
  const char* name;
  std::string other;  // a body whose context differs from body("q")
};

class NearContextDiffers : public ::testing::TestWithParam<ContextCase> {};

TEST_P(NearContextDiffers, ContextKeyDiffers) {
  auto base = query_of(body("q"));
  auto other = query_of(GetParam().other);
  ASSERT_TRUE(base && other);
  EXPECT_NE(base->context_key, other->context_key);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NearContextDiffers,
    ::testing::Values(ContextCase{"system_prompt", body("q", "", "Be verbose.")},
                      ContextCase{"seed", body("q", R"(,"seed":7)")},
                      ContextCase{"temperature", body("q", R"(,"temperature":0.2)")},
                      ContextCase{"max_tokens", body("q", R"(,"max_tokens":9)")},
                      ContextCase{"tools", body("q", R"(,"tools":[{"type":"function","function":{"name":"f"}}])")},
                      ContextCase{"model", R"({"model":"other","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"q"}]})"},
                      ContextCase{"earlier_turn",
                                  R"({"model":"tiny","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"q"}]})"}),
    [](const ::testing::TestParamInfo<ContextCase>& info) { return std::string(info.param.name); });

TEST(NearKey, TenantAndNamespaceArePartOfTheContext) {
  KeyContext other_tenant = testing::base_context();
  other_tenant.tenant = "tenant-b";
  KeyContext other_ns = testing::base_context();
  other_ns.ns = "faq";
  auto a = query_of(body("q")), b = query_of(body("q"), other_tenant), c = query_of(body("q"), other_ns);
  ASSERT_TRUE(a && b && c);
  EXPECT_NE(a->context_key, b->context_key);
  EXPECT_NE(a->context_key, c->context_key);
}

TEST(NearKey, NeverAnExactKey) {
  auto q = query_of(body("q"));
  ASSERT_TRUE(q);
  EXPECT_NE(q->context_key, testing::key_of(body("q")).key);
  EXPECT_NE(q->context_key, testing::key_of(body("")).key);
}

TEST(NearKey, AbsentUnlessTheLastMessageIsUserText) {
  EXPECT_FALSE(query_of(R"({"model":"tiny","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]})"));
  EXPECT_FALSE(query_of(
      R"({"model":"tiny","messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]})"));
  auto parts = query_of(R"({"model":"tiny","messages":[{"role":"user","content":[{"type":"text","text":"hello "},{"type":"text","text":"there"}]}]})");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->text, "hello there");
}

}  // namespace
}  // namespace reprox::policy
