// The audit log and access log entries of chat requests: one per request,
// written when its answer is complete (or has failed). Renders only what
// the configured logs take; also feeds the status page's recent requests
// (AppContext::status) when there is one.
//
// Threading: the request's own executor; the AuditLog queues without
// blocking.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/api_error.hpp"
#include "common/generation.hpp"
#include "proxy/app/app_context.hpp"

namespace reprox {

struct ChatContext;

struct ChatOutcome {
  const char* cache = "";      // hit | miss | coalesced | bypass
  std::string_view tier;       // memory | redis | "" (generated)
  const Usage* usage = nullptr;  // null when no answer was complete
  int status = 200;
  std::string error;           // the error's code (else its type); "" on success
  int64_t ttl_s = -1;          // the TTL stored with or left; -1: not stored
};

void log_chat(const ChatContext& chat, const ChatOutcome& outcome);
// A request refused before it had a key (bad body, unknown model).
void log_rejected_chat(AppContext& app, const api::ApiError& error, std::chrono::steady_clock::time_point started);

}  // namespace reprox
