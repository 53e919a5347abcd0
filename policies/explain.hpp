// The body of POST /reprox/v1/explain and of `reprox key`.
#pragma once

#include <string>

#include "policies/cache_policy.hpp"
#include "policies/canonical_key.hpp"

namespace reprox::policy {

// {"key","canonical","seed","seed_injected","cacheable","reason"};
// cacheable is true when the request may read or write the cache.
std::string explain_json(const KeyResult& key, const Cacheability& cacheability);

}  // namespace reprox::policy
