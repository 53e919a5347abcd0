#include "policies/cache_policy.hpp"

namespace reprox::policy {

Cacheability cacheability(const api::CacheDirectives& d) {
  Cacheability c;
  if (d.no_store) return Cacheability{false, false, "no-store: the cache is bypassed"};
  std::string reason;
  auto note = [&](const std::string& why) { reason += reason.empty() ? why : "; " + why; };
  if (d.no_cache) {
    c.readable = false;
    note("no-cache: generate and store (refresh)");
  }
  if (d.only_if_cached) {
    c.writable = false;
    note("only-if-cached: answer from the cache or 504");
  }
  if (d.ttl_seconds && *d.ttl_seconds == 0) {
    c.writable = false;
    note("ttl 0: nothing is stored");
  }
  if (d.max_age_seconds && c.readable) note("max-age=" + std::to_string(*d.max_age_seconds));
  c.reason = reason.empty() ? "cacheable" : reason;
  return c;
}

Cacheability request_cacheable(const api::ChatRequest& request, const CacheRule& rule) {
  if (!rule.cache) return Cacheability{false, false, "rule " + rule.name + ": cache = false"};
  if (!rule.tools && !request.tools.is_null())
    return Cacheability{false, false, "rule " + rule.name + ": tools = false and the request has tools"};
  return cacheability(request.cache);
}

ResponseCacheability response_cacheable(const Generation& g, const ResponsePolicy& policy) {
  if (!g.complete()) return {false, "incomplete: an error, an aborted or a partial answer"};
  if (!policy.store_truncated)
    for (const GenEvent& e : g.events)
      if (e.finish_reason == "length")
        return {false, "finish_reason length and store_truncated = false"};
  return {true, "complete"};
}

}  // namespace reprox::policy
