#include "proxy/app/status_endpoints.hpp"

#include <string>

#include "proxy/app/http_util.hpp"
#include "proxy/app/status_board.hpp"

namespace reprox {

// proxy/app/status_page.html, embedded at build time (cmake/embed_text.cmake).
extern const char kStatusPageHtml[];
extern const size_t kStatusPageHtmlSize;

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out.push_back(char(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// True when the request may go on; else answers 401.
bool status_gate(const AppContext& app, Responder& r, bool authorized, std::string_view query_token) {
  const std::string& token = app.options.admin_token;
  if (token.empty() || authorized) return true;
  if (!query_token.empty() && same_secret(query_token, token)) return true;
  respond_error(r, api::ApiError{401, "a valid admin bearer token is required", "authentication_error", "",
                                 "invalid_api_key"});
  return false;
}

api::ApiError no_status_board() {
  return api::ApiError{404, "the status board is not enabled", "invalid_request_error", "", "not_found"};
}

}  // namespace

std::string query_param(std::string_view target, std::string_view name) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq)) == name)
      return eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return "";
}

void handle_stats(AppContext& app, const Request& /*req*/, Responder& r, bool authorized) {
  if (!status_gate(app, r, authorized, "")) return;
  if (!app.status) return respond_error(r, no_status_board());
  Response res = json_response(200, app.status->stats_json());
  res.set(http::field::cache_control, "no-store");
  r.respond(std::move(res));
}

void handle_status_page(AppContext& app, const Request& req, Responder& r, bool authorized) {
  if (!status_gate(app, r, authorized, query_param(req.target(), "token"))) return;
  if (!app.status) return respond_error(r, no_status_board());
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, "text/html; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  // Nothing but this document and the stats it polls: no external fetch.
  res.set("content-security-policy",
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
          "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.set("referrer-policy", "no-referrer");  // the URL may carry the token
  res.set("x-content-type-options", "nosniff");
  res.body().assign(kStatusPageHtml, kStatusPageHtmlSize);
  r.respond(std::move(res));
}

}  // namespace reprox
