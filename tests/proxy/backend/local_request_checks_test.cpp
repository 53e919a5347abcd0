// What the embedded engine refuses: vLLM's extensions it does not
// implement get a 400 naming them unless set to their neutral value.
#include "proxy/backend/local_request_checks.hpp"

#include <gtest/gtest.h>

#include <string>

#include "proxy/api/chat_request_parser.hpp"

namespace reprox {
namespace {

// The check's answer for a chat body with `extra` members after messages.
std::optional<api::ApiError> check(const std::string& extra) {
  const std::string body = R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}";
  api::ParseResult parsed = api::parse_chat_request(body);
  EXPECT_TRUE(parsed.ok()) << body << ": " << parsed.error.to_json();
  if (!parsed.ok()) return std::nullopt;
  return unsupported_option(*parsed.request);
}

TEST(LocalRequestChecks, AVllmExtensionTheEngineLacksIsA400NamingIt) {
  const std::pair<const char*, const char*> refused[] = {
      {"guided_regex", R"(,"guided_regex":"[a-z]+")"},
      {"prompt_logprobs", R"(,"prompt_logprobs":1)"},
      {"structural_tag", R"(,"structural_tag":"{}")"},
      {"echo", R"(,"echo":true)"},
      {"chat_template", R"(,"chat_template":"{{ messages }}")"},
      {"best_of", R"(,"best_of":4)"},
      {"use_beam_search", R"(,"use_beam_search":true)"},
      {"length_penalty", R"(,"length_penalty":"1")"},  // not even a number
  };
  for (const auto& [param, extra] : refused) {
    auto e = check(extra);
    ASSERT_TRUE(e) << extra;
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, param);
    EXPECT_NE(e->message.find("vLLM extension"), std::string::npos) << e->message;
  }
}

TEST(LocalRequestChecks, NeutralValuesOfTheExtensionsPass) {
  for (const char* extra :
       {"", R"(,"min_p":0,"repetition_penalty":1,"length_penalty":1.0,"min_tokens":0,"ignore_eos":false)",
        R"(,"stop_token_ids":[],"skip_special_tokens":true,"spaces_between_special_tokens":true)",
        R"(,"add_generation_prompt":true,"continue_final_message":false,"echo":false,"guided_json":null)",
        R"(,"best_of":1)", R"(,"n":3,"best_of":3)", R"(,"use_beam_search":false,"bad_words":[])",
        // these the engine implements
        R"(,"min_p":0.1,"repetition_penalty":1.2,"min_tokens":4,"ignore_eos":true,"stop_token_ids":[2])",
        R"(,"include_stop_str_in_output":true,"skip_special_tokens":false)",
        R"(,"add_generation_prompt":false,"continue_final_message":true)",
        R"(,"allowed_token_ids":[2,3],"bad_words":["no"],"truncate_prompt_tokens":8)",
        R"(,"return_tokens_as_token_ids":true,"spaces_between_special_tokens":false)",
        R"(,"guided_choice":["yes","no"])", R"(,"response_format":{"type":"json_object"})",
        R"(,"guided_json":{"type":"object"})"}) {
    auto e = check(extra);
    EXPECT_FALSE(e) << extra << ": " << e->to_json();
  }
}

}  // namespace
}  // namespace reprox
