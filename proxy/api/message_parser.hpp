// Validates the `messages` array of a chat request (part of parse_chat_request).
#pragma once

#include <optional>
#include <vector>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"
#include "common/json.hpp"

namespace reprox::api {

// `messages` is the (non-null) value of the body's "messages" field.
// Fills `out` or returns the 400 naming the first offending field, such as
// `messages[2].role` or `messages[0].content[1].type`.
std::optional<ApiError> parse_messages(const json::Value& messages, std::vector<ChatMessage>& out);

// Validates `chat_template_kwargs` (the non-null value; `param` names it):
// an object whose names are not the template's own variables (messages,
// tools, add_generation_prompt, bos_token, eos_token), which the prompt
// builder sets itself.
std::optional<ApiError> check_template_kwargs(const json::Value& kwargs, const std::string& param);

// Validates one tool_calls array (assistant messages); `param` prefixes errors.
std::optional<ApiError> check_tool_calls(const json::Value& tool_calls, const std::string& param);

}  // namespace reprox::api
