// Turns an upstream's OpenAI Chat Completions output (SSE chunk JSON, or a
// whole non-stream response) into GenEvents, tracking which choices have
// finished, the usage and the system_fingerprint. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/generation.hpp"

namespace reprox::backend {

class ChatStreamDecoder {
 public:
  explicit ChatStreamDecoder(uint32_t n_choices);

  // One "data:" payload (not "[DONE]"). Appends one event per choice entry
  // that carries something, in order. On malformed input (bad JSON, an
  // in-stream error object, a choice index >= n, content after a choice
  // finished) returns false and sets *error.
  bool apply_chunk(std::string_view data, std::vector<GenEvent>& out, std::string* error);
  // A whole non-stream response body: one event per choice (message content
  // and other message members, logprobs, finish_reason).
  bool apply_full_response(std::string_view body, std::vector<GenEvent>& out, std::string* error);

  bool all_finished() const { return unfinished_ == 0; }
  // Index of the first choice without a finish_reason (n when all finished).
  uint32_t first_unfinished() const;
  const Usage& usage() const { return usage_; }
  bool has_usage() const { return has_usage_; }
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::vector<bool> finished_;
  uint32_t unfinished_;
  Usage usage_;
  bool has_usage_ = false;
  std::string fingerprint_;
};

}  // namespace reprox::backend
