// The body of POST /reprox/v1/explain and of `reprox key`.
#pragma once

#include <string>

#include "policies/cache_policy.hpp"
#include "policies/cache_rules.hpp"
#include "common/json.hpp"
#include "policies/canonical_key.hpp"

namespace reprox::policy {

struct Explanation {
  const KeyResult& key;
  const Cacheability& cacheability;
  const CacheRule* rule = nullptr;  // null: no rule applies (`reprox key`)
  const TtlDecision* ttl = nullptr;
  std::string sampling_mode;        // "" or "greedy-fallback"
  json::Object extra;               // more members, appended as given (e.g. "near")
};

// {"key","canonical","seed","seed_injected","cacheable","reason"} and, with
// a rule, "rule", "ttl" and "ttl_reason"; "mode" when a sampling mode is
// set; then `extra`. cacheable is true when the request may read or write
// the cache.
std::string explain_json(const Explanation& e);

}  // namespace reprox::policy
