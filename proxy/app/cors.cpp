#include "proxy/app/cors.hpp"

#include <algorithm>
#include <cctype>

namespace reprox {

namespace {

// The answer fields a script may read beyond the CORS-safelisted ones.
constexpr std::string_view kExposed =
    "x-reprox-cache, x-reprox-cache-reason, x-reprox-key, x-reprox-seed, x-reprox-ttl, x-reprox-tier, "
    "x-reprox-similarity, x-reprox-near-key, x-reprox-fallback, age, retry-after";
// How long a browser may reuse a preflight's answer, in seconds.
constexpr std::string_view kPreflightMaxAge = "600";

bool same_text_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

template <class Fields>
void set_answer_fields(Fields& fields, std::string_view allow_origin, bool per_origin) {
  fields.set(http::field::access_control_allow_origin, allow_origin);
  fields.set(http::field::access_control_expose_headers, kExposed);
  if (per_origin) fields.set(http::field::vary, "Origin");
}

class CorsResponder final : public Responder {
 public:
  CorsResponder(std::shared_ptr<Responder> inner, std::string allow_origin, bool per_origin)
      : inner_(std::move(inner)), allow_origin_(std::move(allow_origin)), per_origin_(per_origin) {}

  void respond(Response&& response) override {
    set_answer_fields(response, allow_origin_, per_origin_);
    inner_->respond(std::move(response));
  }
  void respond_rendered(RenderedAnswer&& answer) override {
    answer.fields.append("Access-Control-Allow-Origin: ").append(allow_origin_).append("\r\n");
    answer.fields.append("Access-Control-Expose-Headers: ").append(kExposed).append("\r\n");
    if (per_origin_) answer.fields.append("Vary: Origin\r\n");
    inner_->respond_rendered(std::move(answer));
  }
  void stream(http::response<http::empty_body>&& head, std::shared_ptr<StreamSource> source) override {
    set_answer_fields(head, allow_origin_, per_origin_);
    inner_->stream(std::move(head), std::move(source));
  }
  void on_disconnect(std::function<void()> gone) override { inner_->on_disconnect(std::move(gone)); }
  ConnectionStrand executor() override { return inner_->executor(); }

 private:
  std::shared_ptr<Responder> inner_;
  std::string allow_origin_;
  bool per_origin_;
};

}  // namespace

void add_cors_fields(Response& response, std::string_view allow_origin, bool per_origin) {
  set_answer_fields(response, allow_origin, per_origin);
}

CorsPolicy::CorsPolicy(std::vector<std::string> origins) {
  any_ = std::find(origins.begin(), origins.end(), "*") != origins.end();
  if (!any_) origins_ = std::move(origins);
}

std::string CorsPolicy::allow_origin(std::string_view origin) const {
  if (origin.empty()) return {};
  if (any_) return "*";
  for (const auto& allowed : origins_)
    if (same_text_ignoring_case(allowed, origin)) return std::string(origin);
  return {};
}

bool is_preflight(const Request& request) {
  return request.method() == http::verb::options && request.count(http::field::origin) > 0 &&
         request.count(http::field::access_control_request_method) > 0;
}

Response options_answer(const Request& request, std::string_view methods, std::string_view allow_origin,
                        bool per_origin) {
  Response res{http::status::no_content, 11};
  res.set(http::field::allow, methods);
  if (!allow_origin.empty()) {
    res.set(http::field::access_control_allow_origin, allow_origin);
    res.set(http::field::access_control_allow_methods, methods);
    // Every request header is accepted; Authorization must be named, as a
    // wildcard does not cover it.
    if (auto asked = request[http::field::access_control_request_headers]; !asked.empty())
      res.set(http::field::access_control_allow_headers, asked);
    res.set(http::field::access_control_max_age, kPreflightMaxAge);
    // Chromium's Private Network Access: a page of a public origin asks
    // before it calls a server on a private address (reprox on localhost).
    if (request["Access-Control-Request-Private-Network"] == "true")
      res.set("Access-Control-Allow-Private-Network", "true");
  }
  if (per_origin) res.set(http::field::vary, "Origin");
  return res;
}

std::shared_ptr<Responder> with_cors(std::shared_ptr<Responder> inner, std::string allow_origin, bool per_origin) {
  return std::make_shared<CorsResponder>(std::move(inner), std::move(allow_origin), per_origin);
}

}  // namespace reprox
