// What may be read from and written to the response cache, in the shape of
// Envoy's CachePolicy: one decision about the request, taken before the
// lookup, and one about the response, taken before the store. Each comes
// with a short reason (x-reprox-cache-reason, explain, logs).
#pragma once

#include <string>

#include "common/chat_request.hpp"
#include "common/generation.hpp"
#include "policies/cache_rules.hpp"

namespace reprox::policy {

struct Cacheability {
  bool readable = true;  // may be answered from the cache
  bool writable = true;  // its generation may be stored
  std::string reason;    // short, for /reprox/v1/explain and logs
  // Neither read nor written: the answer carries x-reprox-cache: bypass.
  bool bypass() const { return !readable && !writable; }
};

// The request's own directives: no-store: neither; no-cache: write only
// (refresh); only-if-cached: read only (a miss is a 504, nothing is
// generated); ttl 0: read only. max-age limits the age of a readable entry;
// it is enforced by the caller.
Cacheability cacheability(const api::CacheDirectives& directives);

// The request under its rule: a rule with cache = false bypasses; a request
// with tools bypasses under a rule with tools = false; otherwise the
// directives decide (as cacheability()).
Cacheability request_cacheable(const api::ChatRequest& request, const CacheRule& rule);

struct ResponsePolicy {
  bool store_truncated = true;  // store answers that stopped at max_tokens
};

struct ResponseCacheability {
  bool store = true;
  std::string reason;
};

// Whether a finished generation may be stored: never an incomplete one
// (an error, an aborted or a partial stream); a choice that ended with
// finish_reason "length" only under store_truncated.
ResponseCacheability response_cacheable(const Generation& generation, const ResponsePolicy& policy);

}  // namespace reprox::policy
