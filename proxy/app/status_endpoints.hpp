// GET /reprox/v1/stats (the status JSON) and GET /reprox/status (the status
// page, one self-contained HTML document that polls the JSON every 2 s).
//
// Access: open while no admin token is configured, like /metrics. With an
// admin token both need `Authorization: Bearer TOKEN` and answer 401 (an
// OpenAI error) without it; the page also takes the token once as
// `?token=TOKEN` (percent-encoded, '+' a space, as URLSearchParams reads
// it), and sends it to the JSON endpoint as a bearer header.
//
// Threading: the request's I/O thread; nothing here blocks (StatusBoard).
#pragma once

#include <string_view>

#include "proxy/app/app_context.hpp"
#include "proxy/server/responder.hpp"

namespace reprox {

// `authorized`: the request carries the admin bearer token (the router's
// admin_authorized()).
void handle_stats(AppContext& app, const Request& req, Responder& r, bool authorized);
void handle_status_page(AppContext& app, const Request& req, Responder& r, bool authorized);

// The value of query parameter `name` in `target`, percent-decoded; "" when
// absent. Exposed for tests.
std::string query_param(std::string_view target, std::string_view name);

}  // namespace reprox
