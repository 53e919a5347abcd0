// Cross-origin access for browser apps served from other origins
// ([server] cors_origins). Off by default: answers carry no CORS fields,
// so browsers keep pages of other origins from reading them. Clients that
// are not browsers send no Origin and never see these fields.
// Threading: a CorsPolicy is immutable after construction; any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/server/responder.hpp"

namespace reprox {

class CorsPolicy {
 public:
  CorsPolicy() = default;  // off
  // `origins` as conf's cors_origins() gives them: empty (off), {"*"}, or
  // lower-case origins "scheme://host[:port]".
  explicit CorsPolicy(std::vector<std::string> origins);

  bool enabled() const { return any_ || !origins_.empty(); }
  // The Access-Control-Allow-Origin value for a request whose Origin is
  // `origin`: "*" when every origin may call, the origin itself when it is
  // on the list (compared without case), empty otherwise.
  std::string allow_origin(std::string_view origin) const;
  // Answers differ by Origin (a list, not "*"): they carry Vary: Origin.
  bool per_origin() const { return !any_ && !origins_.empty(); }

 private:
  bool any_ = false;
  std::vector<std::string> origins_;
};

// A CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
bool is_preflight(const Request& request);

// The 204 answer to an OPTIONS request on a resource that takes `methods`
// ("POST, OPTIONS"). With a non-empty `allow_origin` (the preflight's
// origin is allowed) it carries the CORS fields: the allowed origin and
// methods, the request headers the preflight asked for, a max age, and
// private network access when the preflight asks for it.
Response options_answer(const Request& request, std::string_view methods, std::string_view allow_origin,
                        bool per_origin);

// Adds the CORS fields of an allowed origin (as with_cors() does) to `response`.
void add_cors_fields(Response& response, std::string_view allow_origin, bool per_origin);

// `inner`, with the CORS fields of an allowed origin added to every answer
// it gives: whole, pre-rendered or streamed. Expose-Headers lists reprox's
// x-reprox-* fields, Age and Retry-After, so that scripts can read them.
std::shared_ptr<Responder> with_cors(std::shared_ptr<Responder> inner, std::string allow_origin, bool per_origin);

}  // namespace reprox
