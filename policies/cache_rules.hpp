// Cache rules: which rule governs a request, and the TTL its answer gets.
// Pure functions over values; the proxy builds the rule list from
// [[cache.rule]] (conf/) and applies the decisions.
//
// A rule matches when its four fnmatch globs match the request's resolved
// model, namespace, tenant hash and route ("" for an absent namespace or a
// shared cache's tenant). The first matching rule wins; when none matches,
// the default rule (every glob "*", ttl = [cache] ttl) governs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/chat_request.hpp"

namespace reprox::policy {

inline constexpr int64_t kDefaultMaxTtlSeconds = 7 * 24 * 3600;

// Near-duplicate matching of the last user message (see near_key.hpp):
// off; shadow (compute the near-hit, serve the exact path, count whether
// the answers agree); serve (answer an exact miss from the nearest entry).
enum class NearMode { off, shadow, serve };

struct CacheRule {
  std::string model = "*", ns = "*", tenant = "*", route = "*";
  int64_t ttl_s = 3600;                        // TTL of a stored answer
  int64_t max_ttl_s = kDefaultMaxTtlSeconds;   // no request or hot-key step goes past it
  bool cache = true;                           // false: bypass the cache
  bool tools = true;                           // false: requests with tools are not stored
  NearMode near = NearMode::off;
  double near_threshold = 0.95;                // cosine similarity of the last user messages
  std::string name = "default";                // "FILE:LINE" or "default", for explain and logs
};

struct RuleSubject {
  std::string_view model, ns, tenant, route;
};

// fnmatch(3) without flags: '*', '?' and bracket classes.
bool glob_matches(const std::string& pattern, std::string_view text);

// The first rule in `rules` that matches, else `fallback`. The reference
// points into `rules` or is `fallback`.
const CacheRule& match_rule(const std::vector<CacheRule>& rules, const CacheRule& fallback,
                            const RuleSubject& subject);

struct TtlDecision {
  int64_t ttl_s = 0;  // 0: nothing is stored (a request asked for ttl 0)
  std::string why;    // e.g. "rule default: ttl 3600s; max-age=60 shortens it to 60s"
};

// The TTL an answer to a request with `directives` gets under `rule`:
// the rule's ttl; a body `cache.ttl` replaces it (longer or shorter) but
// never goes past max_ttl; a Cache-Control max-age only ever shortens it
// (max-age=0 asks for a fresh answer and leaves the TTL alone).
TtlDecision effective_ttl(const CacheRule& rule, const api::CacheDirectives& directives);

// Hot keys: an entry hit `hits` times within `window_s` seconds is hot and
// its TTL is extended one step: after k steps its lifetime from now is
// base_ttl * 2^k, capped at the rule's max_ttl.
struct HotKeyPolicy {
  int64_t hits = 20;  // 0: hot-key extension is off
  int64_t window_s = 3600;
};

// Per-entry hit count of the current window and the steps taken so far.
struct HotCounter {
  int64_t window_start_ms = 0;
  uint32_t hits = 0;
  uint32_t steps = 0;
};

// Counts a hit at `now_ms`; true when it is the hit that makes the entry
// hot in its window (then `counter.steps` has been advanced). A window
// starts at the first hit after the previous one ended.
bool record_hit(HotCounter& counter, int64_t now_ms, const HotKeyPolicy& policy);

// The lifetime, from now, after `steps` extensions: base * 2^steps, at most
// max_ttl_s (and at least base).
int64_t hot_ttl_seconds(int64_t base_ttl_s, uint32_t steps, int64_t max_ttl_s);

}  // namespace reprox::policy
