// The chat completions body sent upstream for one generation.
#pragma once

#include <string>

#include "proxy/backend/backend.hpp"

namespace reprox::backend {

// Starts from the client's parsed body (request.chat.raw) so unknown fields
// pass through, then: "model" = model_id, "seed" = the effective seed,
// "stream": true with "stream_options": {"include_usage": true} always (the
// proxy renders the client's own format from the events), the reprox-only
// "cache" object removed. max_tokens is left as the client sent it (no limit
// is invented). When raw is not an object the body is rebuilt from the
// validated fields.
std::string build_upstream_chat_body(const BackendRequest& request);

}  // namespace reprox::backend
