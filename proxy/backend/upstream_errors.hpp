// OpenAI-style errors for what can go wrong talking to an upstream.
//  - upstream 4xx: its status, message, type, param and code pass through;
//  - upstream 5xx, garbage, broken streams, refused connections: 502, type
//    "upstream_error";
//  - timeouts: 504, type "upstream_timeout".
// `code` names the precise cause (e.g. "connect_failed", "idle_timeout").
#pragma once

#include <string>
#include <string_view>

#include "common/api_error.hpp"

namespace reprox::backend {

enum class TransportFailure {
  resolve_failed,
  connect_failed,       // refused, unreachable, reset while connecting
  connect_timeout,
  first_byte_timeout,   // no complete response header in time
  idle_timeout,         // no body bytes for too long
  connection_lost,      // reset or closed before the response ended
  response_too_large,
  bad_http,             // not a parseable HTTP/1.x response
};

struct TransportError {
  TransportFailure kind;
  std::string detail;  // the system's words, for the message
};

// `upstream` is the URL for display (no credentials).
api::ApiError error_from_transport(const TransportError& failure, const std::string& upstream);
api::ApiError error_from_upstream_status(int status, std::string_view body,
                                         const std::string& upstream);
api::ApiError bad_upstream_response(const std::string& detail, const std::string& upstream);

}  // namespace reprox::backend
