// POST /v1/chat/completions: validate, key, look up, coalesce, generate,
// store, and answer as JSON or SSE.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "proxy/app/app_context.hpp"
#include "proxy/app/near_match.hpp"
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
  // Near-duplicate matching, set on the request's strand before it is
  // answered: the entry it is answered from (serve), or the would-be
  // near-hit's answer to compare with the generation (shadow).
  std::shared_ptr<void> tenant_permit;  // the tenant's concurrency slot, held until the context goes
  std::optional<NearCandidate> near_hit;
  std::shared_ptr<const Generation> near_shadow;
  std::optional<NearCandidate> near_shadow_match;
};

void handle_chat(AppContext& app, Request&& request, std::shared_ptr<Responder> responder);

// The parts of the chat path that near-duplicate matching reuses.
// Answers with `gen` (on the request's strand); `ttl_s` and `age_seconds`
// as in answer_fields(); `tier` "" for a generation.
void answer_from_generation(ChatContext& c, const StoredGeneration& gen, const char* cache, int64_t age_seconds,
                            int64_t ttl_s, const std::string& tier = "");
// Generates the answer (a miss): joined to an identical generation in
// flight when `coalesce`, else on its own (bypass).
void generate_and_answer(const std::shared_ptr<ChatContext>& c, bool coalesce);

}  // namespace reprox
