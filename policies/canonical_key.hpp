// The canonical request and its key (interface.md "Canonical key").
// Pure functions: the same request and context always give the same bytes.
#pragma once

#include <cstdint>
#include <string>

#include "common/chat_request.hpp"

namespace reprox::policy {

inline constexpr int kKeyVersion = 1;

struct KeyContext {
  std::string model_id;     // resolved model id
  std::string fingerprint;  // system_fingerprint of that model
  std::string tenant;       // tenant_of(Authorization); "" when the cache is shared
  std::string ns;           // namespace (merged cache directives)
  uint64_t default_seed = 42;
  // The completion limit the backend will use for this request: see
  // effective_max_tokens(). The key writes it as `max_tokens`.
  int64_t effective_max_tokens = 0;
  // "" for the sampling the request asked for; "greedy-fallback" while the
  // greedy fallback rewrites the request to temperature 0. Written to the
  // key as `mode` when not empty, so fallback answers and sampled answers
  // never share a key.
  std::string sampling_mode;
  // True when body fields reprox does not know reach the generator (an
  // upstream gets the client's body): they are then keyed, as `other`, so
  // two requests that differ only there never share an answer. False for
  // the embedded engine, which ignores them.
  bool key_other_fields = false;
};

struct KeyResult {
  std::string canonical;  // compact sorted JSON
  std::string key;        // lowercase hex SHA-256 of `canonical` (64 chars)
  uint64_t seed = 0;      // the seed used: the request's, or default_seed
  bool seed_injected = false;
};

// The request's max_tokens / max_completion_tokens, else the backend default.
int64_t effective_max_tokens(const api::ChatRequest& request, int64_t backend_default);

// Canonical JSON holds: v, model, fp, tenant, ns; messages (role, content,
// name, tool_calls, tool_call_id and the legacy function_call; absent fields
// omitted, a null content omitted); temperature, top_p, top_k, seed, n,
// max_tokens, stop (sorted, de-duplicated), presence_penalty,
// frequency_penalty, logit_bias ({"id": bias}), logprobs, top_logprobs;
// tools, tool_choice, response_format and the legacy functions /
// function_call when present; mode when a sampling mode is set; with
// key_other_fields, `other`: every top-level body member not named above
// and not one that never changes the answer (model, stream,
// stream_options, user, metadata, store, cache, max_completion_tokens),
// when there is one. At temperature 0, seed, top_p and top_k are left out.
// The seed is written as the uint64 the engine uses.
KeyResult make_key(const api::ChatRequest& request, const KeyContext& context);

}  // namespace reprox::policy
