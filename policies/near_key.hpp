// Near-duplicate matching keys a request twice: its exact key, and a
// context key that holds everything but the last user message. Two
// requests are near-duplicate candidates only when their context keys are
// equal: the same tenant, namespace, model, fingerprint, system prompt,
// earlier turns, tools, seed and every parameter that changes the answer.
// Only the last user message may differ, and only its text is compared
// (policies/near_text.hpp, near_guards.hpp).
#pragma once

#include <optional>
#include <string>

#include "common/chat_request.hpp"
#include "policies/canonical_key.hpp"

namespace reprox::policy {

struct NearQuery {
  std::string context_key;  // hex SHA-256; never equal to an exact key
  std::string text;         // the last user message
};

// Present when the request ends with a user message whose content is text
// (a string, or text parts only); absent otherwise (images, a tool turn).
std::optional<NearQuery> near_query(const api::ChatRequest& request, const KeyContext& context);

}  // namespace reprox::policy
