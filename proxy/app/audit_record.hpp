// The audit record of one chat request, and its two renderings: one JSON line
// for the audit log file and one short human line for the access log.
//
// Contract: the record carries no credential. The tenant hash (hex SHA-256 of
// the bearer token, "" when shared) is its only identity; there is no field
// for the Authorization header or the token, and none may be added.
// `messages` is set only when prompts are to be logged.
//
// Threading: plain values and pure functions; render on any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/chat_request.hpp"
#include "common/json.hpp"

namespace reprox {

// The sampling parameters a request was answered with.
struct AuditParams {
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  int64_t max_tokens = 0;  // effective: the request's, or the server's default
  int64_t n = 1;
  std::vector<std::string> stop;
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  bool logprobs = false;
  int64_t top_logprobs = 0;
  std::string response_format;  // its "type"; "" when absent (then not rendered)
  bool stream = false;
};

// The parameters of `request`, with the effective max_tokens.
AuditParams audit_params(const api::ChatRequest& request, int64_t effective_max_tokens);

struct AuditRecord {
  int64_t time_ms = 0;      // unix milliseconds when the request arrived
  std::string key;          // hex cache key
  std::string tenant;       // hex tenant hash; "" when shared
  std::string model;
  uint64_t seed = 0;
  bool seed_injected = false;  // the request had no seed; the default was used
  AuditParams params;
  std::string mode;         // "sampled" | "greedy-fallback"
  std::string fingerprint;  // system_fingerprint
  std::string cache;        // "hit" | "miss" | "coalesced" | "bypass" | "error"
  std::string tier;         // "memory" | "redis" | ""
  std::string rule;         // the matched rule, e.g. "conf/reprox.toml:40", or "default"
  int64_t ttl_s = 0;        // the TTL the entry got or has
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  double latency_ms = 0.0;
  int status = 0;           // HTTP status
  std::string error;        // error code; "" on success
  // The request's messages, e.g. `*request.raw.find("messages")`; only when
  // prompts are logged.
  std::optional<json::Value> messages;
};

// One JSON object and '\n'. Keys, in order: time, time_ms, key, tenant, model,
// seed, seed_injected, params {temperature, top_p, top_k, max_tokens, n,
// stop, presence_penalty, frequency_penalty, logprobs, top_logprobs,
// response_format (when set), stream}, mode, fingerprint, cache, tier, rule,
// ttl_s, prompt_tokens, completion_tokens, cached_tokens, latency_ms (rounded
// to the microsecond), status, error, and messages (when set). Strings that
// are not valid UTF-8 are written with U+FFFD in place of the bad bytes.
std::string audit_json_line(const AuditRecord& record);

// One access log line and '\n', space-separated:
//   TIME PEER "METHOD TARGET" STATUS CACHE TIER LATENCYms key=KEY16 model=MODEL
//     [tenant=TENANT8] [error=CODE]
// e.g.
//   2026-12-04T20:43:05.123Z 127.0.0.1 "POST /v1/chat/completions" 200 hit
//     memory 0.42ms key=ab12cd34ef567890 model=reprox-tiny-qwen3
// (on one line). TIME is the record's time (RFC 3339); an empty TIER, PEER
// or CACHE is "-"; LATENCY has two decimals; KEY16 and TENANT8 are the first
// 16 and 8 hex digits. Bytes outside printable ASCII, '"', '\\' and (outside
// the quotes) spaces are written as \xHH, so a line cannot be split or forged.
std::string access_line(const AuditRecord& record, std::string_view peer, std::string_view method,
                        std::string_view target);

// "YYYY-MM-DDTHH:MM:SS.mmmZ" (RFC 3339, UTC), clamped to years 0000..9999.
std::string rfc3339_utc_ms(int64_t unix_ms);

}  // namespace reprox
