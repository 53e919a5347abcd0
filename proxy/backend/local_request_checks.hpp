// What the embedded engine refuses rather than answer as if it were absent:
// each check gives the 400 naming the first field it cannot honour, or
// nullopt. Pure functions of the parsed request; no engine needed.
#pragma once

#include <optional>
#include <vector>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"

namespace reprox {

// The first content part a text-only model would not see (an image, audio
// or a file); `param` names its type, as messages[i].content[j].type.
std::optional<api::ApiError> unreadable_part(const std::vector<api::ChatMessage>& messages);

// The first option that asks for what the engine cannot give: tool or
// function calls, audio, a web search, and vLLM's
// sampling and decoding extensions it does not implement (guided_regex,
// use_beam_search, prompt_logprobs, ...) when set to anything but their
// neutral value. Options that cannot change a text answer (tool_choice
// "none" or "auto" without tools, prediction, store, metadata, echo false,
// ...) pass; so do structured output (response_format json_object and
// json_schema, whose schema guide_spec.hpp checks) and the extensions the
// engine implements (min_p, min_tokens, guided_choice, guided_json, ...).
std::optional<api::ApiError> unsupported_option(const api::ChatRequest& request);

}  // namespace reprox
