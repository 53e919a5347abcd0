// POST /v1/chat/completions: validate, key, look up, coalesce, generate,
// store, and answer as JSON or SSE.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "proxy/app/app_context.hpp"
#include "proxy/app/prepare_chat.hpp"
#include "proxy/server/responder.hpp"

namespace reprox {

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
