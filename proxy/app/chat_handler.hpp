// POST /v1/chat/completions: validate, key, look up, coalesce, generate,
// store, and answer as JSON or SSE.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "policies/cache_policy.hpp"
#include "policies/canonical_key.hpp"
#include "common/api_error.hpp"
#include "common/chat_request.hpp"

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
// The same, shared: a repeated request gets the PreparedChat that a
// per-thread memo keeps (the cache-hit path), without a copy.
std::optional<api::ApiError> prepare_chat(AppContext& app, const Request& request,
                                          std::shared_ptr<const PreparedChat>& out);

// One chat request in progress. The prepared fields are read-only views of
// `prepared`.
struct ChatContext {
  ChatContext(AppContext& a, std::shared_ptr<Responder> r, std::shared_ptr<const PreparedChat> p,
              std::chrono::steady_clock::time_point start)
      : app(a),
        responder(std::move(r)),
        prepared(std::move(p)),
        request(prepared->request),
        key(prepared->key),
        cacheability(prepared->cacheability),
        model_id(prepared->model_id),
        fingerprint(prepared->fingerprint),
        tenant(prepared->tenant),
        authorization(prepared->authorization),
        started(start) {}
  AppContext& app;
  std::shared_ptr<Responder> responder;
  const std::shared_ptr<const PreparedChat> prepared;
  const api::ChatRequest& request;
  const policy::KeyResult& key;
  const policy::Cacheability& cacheability;
  const std::string& model_id;
  const std::string& fingerprint;
  const std::string& tenant;
  const std::string& authorization;
  const std::chrono::steady_clock::time_point started;
};

void handle_chat(AppContext& app, Request&& request, std::shared_ptr<Responder> responder);

}  // namespace reprox
