// The head fields of a whole chat answer (cache hit, near-hit or a finished
// generation), rendered as "Name: value\r\n" lines for RenderedAnswer.
#pragma once

#include <cstdint>
#include <string>

#include "proxy/app/chat_handler.hpp"

namespace reprox {

// Content type (and Cache-Control for streams), x-reprox-cache, -key, -seed,
// -cache-reason (bypass), -ttl (when `ttl_s` >= 0), -fallback, Age (when
// `age_seconds` >= 0), x-reprox-tier (when set), and for a near-hit
// x-reprox-similarity and x-reprox-near-key.
std::string answer_fields(const ChatContext& c, const char* cache, int64_t age_seconds, int64_t ttl_s,
                          const std::string& tier);

}  // namespace reprox
