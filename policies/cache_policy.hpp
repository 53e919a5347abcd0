// Whether a request may read and/or write the response cache.
#pragma once

#include <string>

#include "common/chat_request.hpp"

namespace reprox::policy {

struct Cacheability {
  bool readable = true;  // may be answered from the cache
  bool writable = true;  // its generation may be stored
  std::string reason;    // short, for /reprox/v1/explain and logs
};

// no-store: neither; no-cache: write only (refresh); only-if-cached: read
// only (a miss is a 504, nothing is generated); ttl 0: read only.
// max-age limits the age of a readable entry; it is enforced by the store.
Cacheability cacheability(const api::CacheDirectives& directives);

}  // namespace reprox::policy
