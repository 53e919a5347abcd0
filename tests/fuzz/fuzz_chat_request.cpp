// Fuzz target: the POST /v1/chat/completions body parser and validator
// (parse_chat_request, which runs parse_messages and the field checks).
// Properties: never throws or crashes; a rejection is a 400 whose JSON
// rendering parses; an accepted request has messages and sane fields, and
// parsing is deterministic (the same body gives the same request).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using reprox::api::ChatRequest;

std::string summary(const ChatRequest& r) {
  std::string s = r.model + '|' + std::to_string(r.messages.size()) + '|' + std::to_string(r.n) + '|';
  for (const auto& m : r.messages) s += m.role + ':' + m.text() + '|';
  for (const auto& stop : r.stop) s += stop + '|';
  return s + reprox::json::dump(r.raw, true);
}

void check_accepted(std::string_view body, const ChatRequest& r) {
  FUZZ_CHECK(!r.messages.empty(), "an accepted request has messages");
  FUZZ_CHECK(r.n >= 1, "n is at least 1");
  FUZZ_CHECK(r.temperature >= 0, "temperature is not negative");
  FUZZ_CHECK(!r.logprobs ? r.top_logprobs == 0 : true, "top_logprobs needs logprobs");
  FUZZ_CHECK(r.min_tokens >= 0 && (!r.max_tokens || r.min_tokens <= *r.max_tokens), "min_tokens within max_tokens");
  for (size_t i = 0; i < r.stop_token_ids.size(); ++i)
    FUZZ_CHECK(r.stop_token_ids[i] >= 0 && r.stop_token_ids[i] <= INT32_MAX &&
                   (i == 0 || r.stop_token_ids[i - 1] < r.stop_token_ids[i]),
               "stop_token_ids are int32 ids, sorted and unique");
  FUZZ_CHECK(!r.truncate_prompt_tokens || *r.truncate_prompt_tokens == -1 || *r.truncate_prompt_tokens >= 1,
             "truncate_prompt_tokens is -1 or a count");
  FUZZ_CHECK(!(r.continue_final_message && r.add_generation_prompt),
             "continue_final_message needs add_generation_prompt false");
  for (size_t i = 0; i < r.guided_choice.size(); ++i)
    FUZZ_CHECK(!r.guided_choice[i].empty() && (i == 0 || r.guided_choice[i - 1] < r.guided_choice[i]),
               "guided_choice entries are non-empty, sorted and unique");
  if (!r.guided_choice.empty())
    FUZZ_CHECK(r.response_format.is_null() || r.response_format.find("type")->as_string() == "text",
               "guided_choice only with a text response_format");
  for (const auto& m : r.messages) FUZZ_CHECK(!m.role.empty(), "every message has a role");
  auto again = reprox::api::parse_chat_request(body);
  FUZZ_CHECK(again.ok(), "parsing is deterministic");
  FUZZ_CHECK(summary(*again.request) == summary(r), "parsing gives the same request twice");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto parsed = reprox::api::parse_chat_request(body);
  if (parsed.ok()) {
    check_accepted(body, *parsed.request);
    return 0;
  }
  FUZZ_CHECK(parsed.error.status >= 400 && parsed.error.status < 500, "a rejection is a 4xx");
  FUZZ_CHECK(!parsed.error.message.empty(), "a rejection explains itself");
  reprox::json::Value rendered;
  FUZZ_CHECK(!reprox::json::parse(parsed.error.to_json(), rendered), "the error renders as valid JSON");
  return 0;
}
