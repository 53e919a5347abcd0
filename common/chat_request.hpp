// The validated form of a POST /v1/chat/completions body.
// Produced by parse_chat_request() (chat_request_parser.hpp); consumed by the
// canonical key (policies/), the backends and the response renderer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.hpp"

namespace reprox::api {

struct ChatMessage {
  std::string role;  // system | developer | user | assistant | tool | function
  // A string; or, when the message has non-text parts, the parts array with
  // adjacent text parts kept as sent; or null (assistant with tool_calls).
  json::Value content;
  std::optional<std::string> name;
  json::Value tool_calls;                   // null when absent
  std::optional<std::string> tool_call_id;  // tool messages
  json::Value function_call;                // legacy assistant field; null when absent
  // Text of `content`: the string itself, or its text parts and an
  // assistant's refusal parts (what it said when it refused) joined in
  // order ("" if none).
  std::string text() const;
};

// LiteLLM-style body object "cache": never part of the key.
struct CacheDirectives {
  bool no_cache = false;  // do not answer from the cache; generate and store
  bool no_store = false;  // neither read nor write
  std::optional<int64_t> ttl_seconds;
  std::optional<int64_t> max_age_seconds;  // from Cache-Control only
  bool only_if_cached = false;              // from Cache-Control only
  std::optional<std::string> ns;            // namespace
  bool near = true;                         // false (body "near": false): no near-duplicate matching
};

struct ChatRequest {
  std::string model;  // as sent; "" means the server's default model
  std::vector<ChatMessage> messages;

  // Sampling, with OpenAI defaults applied.
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;              // extension; 0 = off
  std::optional<uint64_t> seed;   // absent: the server injects its default
  int64_t n = 1;
  std::optional<int64_t> max_tokens;  // max_tokens or max_completion_tokens
  std::vector<std::string> stop;      // as sent (a string becomes one entry)
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  double min_p = 0.0;               // vLLM's extension; 0 = off
  double repetition_penalty = 1.0;  // vLLM's extension; 1 = off
  // vLLM's extensions on how a choice ends (their neutral values are the
  // defaults). min_tokens: no eos, stop id or stop string before that many
  // completion tokens; ignore_eos: the model's eos does not end a choice;
  // stop_token_ids: ids that end it as eos does (sorted, unique);
  // include_stop_str_in_output: the matched stop is kept in the text;
  // skip_special_tokens false: special tokens' text is kept.
  int64_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<int64_t> stop_token_ids;
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;
  // vLLM's prompt extensions: add_generation_prompt false renders no
  // assistant header; continue_final_message (needs add_generation_prompt
  // false) has the model continue the final message's text.
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  // vLLM's extensions on which tokens may be drawn: allowed_token_ids, when
  // not empty, the only ids (sorted, unique); bad_words, words never to
  // complete (sorted, unique).
  std::vector<int64_t> allowed_token_ids;
  std::vector<std::string> bad_words;
  // vLLM's guided_choice: when not empty, the answer is one of these
  // strings (sorted, unique, none empty).
  std::vector<std::string> guided_choice;
  // vLLM's truncate_prompt_tokens: only the prompt's last k tokens are
  // read (-1: the model's context); absent: all.
  std::optional<int64_t> truncate_prompt_tokens;
  // vLLM's return_tokens_as_token_ids: logprobs name tokens "token_id:ID".
  bool return_tokens_as_token_ids = false;
  std::vector<std::pair<int64_t, double>> logit_bias;  // sorted by token id
  bool logprobs = false;
  int64_t top_logprobs = 0;

  // Kept whole when present (null when absent); keyed, forwarded upstream,
  // rejected by backends that cannot honour them.
  json::Value tools, tool_choice, response_format;
  // Extra variables for the model's chat template (vLLM's extension, such
  // as {"enable_thinking": false}): an object, or null when absent. Keyed.
  json::Value chat_template_kwargs;

  // Never part of the key.
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  std::string user;
  CacheDirectives cache;

  // The body as received (parsed), for forwarding unknown fields upstream.
  json::Value raw;
};

}  // namespace reprox::api
