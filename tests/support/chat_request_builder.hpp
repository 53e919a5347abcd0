#pragma once
// Sampling settings and the BackendRequest they make, for engine tests.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "proxy/backend/backend.hpp"

namespace reprox::testing_support {

struct Sampling {
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  double presence_penalty = 0;
  double frequency_penalty = 0;
  double min_p = 0;
  double repetition_penalty = 1;
  bool logprobs = false;
  int64_t top_logprobs = 0;
  int64_t n = 1;
  int64_t max_tokens = 16;
  int64_t seed = 1;
  std::vector<std::string> stop;
  std::vector<std::pair<int64_t, double>> logit_bias;  // sorted by id
  int64_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<int64_t> stop_token_ids;  // sorted, unique
  bool include_stop = false;
  std::vector<int64_t> allowed_token_ids;  // sorted, unique
  std::vector<std::string> bad_words;      // sorted, unique
  bool json_mode = false;                  // response_format json_object
  std::string json_schema;                 // response_format json_schema with this schema
  std::vector<std::string> guided_choice;  // sorted, unique
};

inline api::ChatMessage chat_message(const std::string& role, const std::string& content) {
  api::ChatMessage m;
  m.role = role;
  m.content = json::Value(content);
  return m;
}

inline std::shared_ptr<BackendRequest> chat_request(const std::string& model_id,
                                                    const std::vector<api::ChatMessage>& messages, const Sampling& s,
                                                    const std::string& tenant = "") {
  auto r = std::make_shared<BackendRequest>();
  r->chat.messages = messages;
  r->chat.temperature = s.temperature;
  r->chat.top_p = s.top_p;
  r->chat.top_k = s.top_k;
  r->chat.presence_penalty = s.presence_penalty;
  r->chat.frequency_penalty = s.frequency_penalty;
  r->chat.min_p = s.min_p;
  r->chat.repetition_penalty = s.repetition_penalty;
  r->chat.logprobs = s.logprobs;
  r->chat.top_logprobs = s.top_logprobs;
  r->chat.n = s.n;
  r->chat.stop = s.stop;
  r->chat.logit_bias = s.logit_bias;
  r->chat.min_tokens = s.min_tokens;
  r->chat.ignore_eos = s.ignore_eos;
  r->chat.stop_token_ids = s.stop_token_ids;
  r->chat.include_stop_str_in_output = s.include_stop;
  r->chat.allowed_token_ids = s.allowed_token_ids;
  r->chat.bad_words = s.bad_words;
  r->chat.guided_choice = s.guided_choice;
  if (s.json_mode) r->chat.response_format = json::Value(json::Object{{"type", json::Value("json_object")}});
  if (!s.json_schema.empty()) {
    json::Value schema;
    EXPECT_FALSE(json::parse(s.json_schema, schema)) << s.json_schema;
    json::Object spec{{"name", json::Value("test")}, {"schema", schema}};
    r->chat.response_format =
        json::Value(json::Object{{"type", json::Value("json_schema")}, {"json_schema", json::Value(std::move(spec))}});
  }
  r->model_id = model_id;
  r->seed = s.seed;
  r->max_tokens = s.max_tokens;
  r->tenant = tenant;
  return r;
}

}  // namespace reprox::testing_support
