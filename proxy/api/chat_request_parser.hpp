// Parses and validates a POST /v1/chat/completions body into a ChatRequest,
// or explains what is wrong with it as an OpenAI-style 400.
//
// Decisions where OpenAI leaves room (each has a test):
// - `null` for an optional field means the field is absent.
// - `seed` accepts any integer in [-2^63, 2^64). A negative seed is kept as
//   its two's-complement uint64 (-1 -> 18446744073709551615): that is the
//   seed the engine uses, so the key writes the uint64 and `-1` and
//   `18446744073709551615` are the same request.
// - `max_completion_tokens` wins over `max_tokens` when both are given.
// - `top_logprobs` (even 0) without `logprobs: true` is rejected, as is
//   `stream_options` without `stream: true`.
// - A content array of only text parts becomes one string (parts joined with
//   no separator, as ChatMessage::text() does); any other part keeps the
//   array whole. An empty content array is rejected.
// - Unknown top-level fields are accepted and kept in `raw` only.
// Never throws; any input (including invalid UTF-8) gives a result.
#pragma once

#include <optional>
#include <string_view>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"

namespace reprox::api {

struct ParseResult {
  std::optional<ChatRequest> request;  // set on success
  ApiError error;                      // meaningful only when !request

  bool ok() const { return request.has_value(); }
  explicit operator bool() const { return ok(); }
};

ParseResult parse_chat_request(std::string_view body);

}  // namespace reprox::api
