// A chat request made ready for the cache: parsed, validated, its model
// resolved, its rule, cacheability and TTL decided, the greedy fallback
// applied and its key computed. Shared by the chat endpoint and
// /reprox/v1/explain, so both always agree.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"
#include "policies/cache_policy.hpp"
#include "policies/cache_rules.hpp"
#include "policies/canonical_key.hpp"
#include "proxy/app/app_context.hpp"

namespace reprox {

inline constexpr const char* kChatRoute = "/v1/chat/completions";
inline constexpr const char* kGreedyFallbackMode = "greedy-fallback";

struct PreparedChat {
  api::ChatRequest request;  // cache directives merged; temperature 0 under the greedy fallback
  policy::KeyResult key;
  policy::KeyContext key_context;  // what `key` was made with (near matching keys the context too)
  policy::Cacheability cacheability;
  const policy::CacheRule* rule = nullptr;  // into AppOptions (rules or default_rule)
  policy::TtlDecision ttl;
  std::string sampling_mode;  // "" or kGreedyFallbackMode
  std::string model_id;
  std::string fingerprint;
  std::string tenant;         // hex SHA-256 of the bearer token; "" when shared
  std::string authorization;  // the client's header, passed to upstreams
};

// Parses and prepares `request` into `out`.
std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request, PreparedChat& out);
// The same, shared: a repeated request gets the PreparedChat that a
// per-thread memo keeps (the cache-hit path), without a copy.
std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request,
                                          std::shared_ptr<const PreparedChat>& out);

}  // namespace reprox
