// Request cache controls (interface.md "Request cache controls"): the
// Cache-Control header, the x-reprox-namespace header and the LiteLLM-style
// body object `cache`, merged into one CacheDirectives.
#pragma once

#include <optional>
#include <string_view>

#include "common/chat_request.hpp"

namespace reprox::api {

// Reads the request directives no-cache, no-store, max-age=N and
// only-if-cached. Tolerant: directive names are case-insensitive, spaces and
// empty entries are skipped, values may be quoted, unknown directives and
// malformed values are ignored. A repeated max-age keeps the smallest value;
// values past int64 clamp to INT64_MAX. Sets only no_cache, no_store,
// max_age_seconds and only_if_cached.
CacheDirectives parse_cache_control(std::string_view header_value);

// Merges the body `cache` object (already in `body`), the parsed
// Cache-Control header and the x-reprox-namespace header value.
// Flags are OR-ed; ttl comes from the body; max-age and only-if-cached from
// the header. Namespace precedence: a non-empty x-reprox-namespace header
// wins over the body's cache.namespace (the header is what a gateway or an
// operator sets, the body what an application sets).
CacheDirectives merge_cache_directives(const CacheDirectives& body, const CacheDirectives& header,
                                       std::optional<std::string_view> namespace_header);

}  // namespace reprox::api
