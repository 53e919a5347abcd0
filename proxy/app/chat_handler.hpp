// POST /v1/chat/completions: validate, key, look up, coalesce, generate,
// store, and answer as JSON or SSE.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "policies/cache_policy.hpp"
#include "policies/canonical_key.hpp"
#include "proxy/api/api_error.hpp"
#include "proxy/api/chat_request.hpp"

#include "proxy/app/app_context.hpp"
#include "proxy/server/responder.hpp"

namespace reprox {

// A validated, keyed chat request.
struct PreparedChat {
  api::ChatRequest request;  // cache directives merged from headers and body
  policy::KeyResult key;
  policy::Cacheability cacheability;
  std::string model_id;
  std::string fingerprint;
  std::string tenant;  // hex SHA-256 of the bearer token; "" when shared
  std::string authorization;  // the client's header, passed to upstreams
};

// Parses, validates, resolves the model and computes the key. Shared by the
// chat endpoint and /reprox/v1/explain, so both always agree.
std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request, PreparedChat& out);

struct ChatContext : PreparedChat {
  ChatContext(AppContext& a, std::shared_ptr<Responder> r) : app(a), responder(std::move(r)) {}
  AppContext& app;
  std::shared_ptr<Responder> responder;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

void handle_chat(AppContext& app, Request&& request, std::shared_ptr<Responder> responder);

}  // namespace reprox
