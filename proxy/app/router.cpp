#include "proxy/app/router.hpp"

#include "policies/explain.hpp"
#include "policies/near_key.hpp"
#include "policies/tenant.hpp"
#include "proxy/app/chat_handler.hpp"
#include "proxy/app/cors.hpp"
#include "proxy/app/near_flow.hpp"
#include "proxy/app/near_match.hpp"
#include "proxy/app/status_endpoints.hpp"
#include "proxy/app/http_util.hpp"
#include "common/json.hpp"

namespace reprox {

namespace {

// Records the status of whatever answer goes out, then passes it on.
class CountingResponder final : public Responder {
 public:
  // `endpoint`: a string literal (the route table's path or "other").
  CountingResponder(std::shared_ptr<Responder> inner, Metrics& metrics, const char* endpoint)
      : inner_(std::move(inner)), metrics_(metrics), endpoint_(endpoint) {}
  void respond(Response&& response) override {
    metrics_.request(endpoint_, response.result_int());
    inner_->respond(std::move(response));
  }
  void respond_rendered(RenderedAnswer&& answer) override {
    metrics_.request(endpoint_, int(answer.status));
    inner_->respond_rendered(std::move(answer));
  }
  void stream(http::response<http::empty_body>&& head, std::shared_ptr<StreamSource> source) override {
    metrics_.request(endpoint_, head.result_int());
    inner_->stream(std::move(head), std::move(source));
  }
  void on_disconnect(std::function<void()> gone) override { inner_->on_disconnect(std::move(gone)); }
  ConnectionStrand executor() override { return inner_->executor(); }

 private:
  std::shared_ptr<Responder> inner_;
  Metrics& metrics_;
  const char* endpoint_;
};

// The methods a resource takes, as Allow and a preflight's answer name them.
constexpr std::string_view kGetMethods = "GET, HEAD, OPTIONS";
constexpr std::string_view kPostMethods = "POST, OPTIONS";
// What a path forwarded to the upstream may take.
constexpr std::string_view kForwardedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

std::string_view methods_of(http::verb route_method) {
  return route_method == http::verb::get ? kGetMethods : kPostMethods;
}

// HEAD is GET without the body (the session leaves it out).
bool method_matches(http::verb method, http::verb route_method) {
  return method == route_method || (method == http::verb::head && route_method == http::verb::get);
}

void respond_method_not_allowed(Responder& r, std::string_view method, std::string_view allowed) {
  api::ApiError error{405, "method " + std::string(method) + " is not allowed here; allowed: " + std::string(allowed),
                      "invalid_request_error", "", ""};
  auto res = json_response(405, error.to_json());
  res.set(http::field::allow, allowed);
  r.respond(std::move(res));
}

api::ApiError not_found(std::string_view path) {
  return api::ApiError{404, "no endpoint " + std::string(path), "invalid_request_error", "", "not_found"};
}

void write_model(std::string& out, const ModelInfo& m) {
  out += "{\"id\":";
  json::write_string(out, m.id);
  out += ",\"object\":\"model\",\"created\":";
  json::write_int(out, m.created);
  out += ",\"owned_by\":";
  json::write_string(out, m.owned_by);
  out += "}";
}

void handle_models(AppContext& app, Responder& r) {
  std::string out = "{\"object\":\"list\",\"data\":[";
  bool first = true;
  for (const auto& m : app.backend->models()) {
    if (!first) out.push_back(',');
    first = false;
    write_model(out, m);
  }
  out += "]}";
  r.respond(json_response(200, std::move(out)));
}

// GET /v1/models/{id} (the SDKs' models.retrieve): the served model's
// object, or 404 model_not_found. The id is the rest of the path, slashes
// included.
constexpr std::string_view kModelPrefix = "/v1/models/";

void handle_model(AppContext& app, std::string_view id, Responder& r) {
  for (const auto& m : app.backend->models()) {
    if (m.id != id) continue;
    std::string out;
    write_model(out, m);
    return r.respond(json_response(200, std::move(out)));
  }
  respond_error(r, api::ApiError::model_not_found(std::string(id)));
}

void handle_health(AppContext& app, Responder& r) {
  if (app.draining && app.draining()) return r.respond(json_response(503, R"({"status":"draining"})"));
  if (!app.backend->ready()) return r.respond(json_response(503, R"({"status":"loading"})"));
  // "degraded" names its reasons: the shared tier down, a greedy fallback.
  std::vector<std::string> reasons;
  if (app.health_detail && app.health_detail() != "ok") reasons.push_back("shared cache tier unavailable (Redis)");
  if (app.fallback)
    if (std::string why = app.fallback->health_reason(); !why.empty()) reasons.push_back(std::move(why));
  std::string body = "{\"status\":";
  json::write_string(body, reasons.empty() ? "ok" : "degraded");
  if (!reasons.empty()) {
    std::string joined;
    for (const auto& why : reasons) joined += (joined.empty() ? "" : "; ") + why;
    body += ",\"reason\":";
    json::write_string(body, joined);
  }
  body += "}";
  r.respond(json_response(200, std::move(body)));
}

void handle_metrics(AppContext& app, Responder& r) {
  if (app.audit_log) app.metrics->audit_log_state(double(app.audit_log->written()), double(app.audit_log->dropped()));
  if (app.memory) {
    auto s = app.memory->stats();
    app.metrics->tier_state("memory", double(s.entries), double(s.bytes), double(s.evictions));
  }
  if (app.shared_tier_scrape) app.shared_tier_scrape(*app.metrics);
  if (app.before_scrape) app.before_scrape(*app.metrics);
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  res.body() = app.metrics->render();
  r.respond(std::move(res));
}

const char* near_mode_name(policy::NearMode m) {
  return m == policy::NearMode::serve ? "serve" : m == policy::NearMode::shadow ? "shadow" : "off";
}

// The "near" member of explain: the mode, the normalized last user message,
// the candidates with their similarity and any guard's veto, the match.
json::Value near_json(const PreparedChat& p, const NearProbe& probe, const NearReport& report) {
  json::Object o;
  o.emplace_back("mode", near_mode_name(p.rule->near));
  o.emplace_back("threshold", p.rule->near_threshold);
  o.emplace_back("context_key", probe.query.context_key);
  o.emplace_back("normalized", report.normalized);
  json::Array candidates;
  for (const NearCandidate& c : report.candidates) {
    json::Object item;
    item.emplace_back("key", c.key);
    item.emplace_back("similarity", c.similarity);
    if (!c.veto.empty()) {
      item.emplace_back("vetoed_by", c.veto);
      item.emplace_back("why", c.why);
    }
    candidates.emplace_back(json::Value(std::move(item)));
  }
  o.emplace_back("candidates", json::Value(std::move(candidates)));
  o.emplace_back("match", report.match ? json::Value(report.match->key) : json::Value());
  return json::Value(std::move(o));
}

void handle_explain(AppContext& app, const Request& req, const std::shared_ptr<Responder>& r) {
  auto prepared = std::make_shared<PreparedChat>();
  if (auto err = prepare_chat(app, req, *prepared)) return respond_error(*r, *err);
  auto answer = [r, prepared](json::Object extra) {
    const PreparedChat& p = *prepared;
    policy::Explanation e{p.key, p.cacheability, p.rule, &p.ttl, p.sampling_mode, std::move(extra)};
    r->respond(json_response(200, policy::explain_json(e)));
  };
  std::optional<policy::NearQuery> query;
  if (near_applies(app, *prepared)) query = policy::near_query(prepared->request, prepared->key_context);
  if (!query) return answer({});
  auto probe = std::make_shared<NearProbe>(near_probe(std::move(*query)));
  find_near(*app.near_index, *probe, prepared->rule->near_threshold, prepared->key.key,
            [answer, prepared, probe](NearReport report) {
              json::Object extra;
              extra.emplace_back("near", near_json(*prepared, *probe, report));
              answer(std::move(extra));
            });
}

bool admin_authorized(const AppContext& app, const Request& req);

// Refuses unless the admin token is configured and presented; true when
// the request may go on.
bool admin_gate(const AppContext& app, const Request& req, Responder& r, const char* what) {
  if (app.options.admin_token.empty()) {
    respond_error(r, api::ApiError{403, std::string(what) + " is disabled: no admin token is configured",
                                   "permission_error", "", ""});
    return false;
  }
  if (!admin_authorized(app, req)) {
    respond_error(r, api::ApiError{401, "a valid admin bearer token is required", "authentication_error", "",
                                   "invalid_api_key"});
    return false;
  }
  return true;
}

// POST /reprox/v1/fallback/clear, body {} or {"model": ID}: ends the greedy
// fallback (of that model, or of all) and empties the audit windows.
void handle_fallback_clear(AppContext& app, const Request& req, Responder& r) {
  if (!admin_gate(app, req, r, "fallback clear")) return;
  std::string model;
  if (!req.body().empty()) {
    json::Value body;
    if (auto err = json::parse(req.body(), body); err || !body.is_object())
      return respond_error(r, api::ApiError::invalid("", "the body must be empty or a JSON object {\"model\": ID}"));
    if (const json::Value* m = body.find("model")) {
      if (!m->is_string()) return respond_error(r, api::ApiError::invalid("model", "model must be a string"));
      model = m->as_string();
    }
  }
  json::Array cleared;
  if (app.fallback)
    for (auto& name : app.fallback->clear(model)) cleared.emplace_back(std::move(name));
  json::Object out;
  out.emplace_back("cleared", json::Value(std::move(cleared)));
  r.respond(json_response(200, json::dump(json::Value(std::move(out)))));
}

// [auth] keys_file: the bearer token's SHA-256 must be on the list.
bool client_key_allowed(const AppContext& app, const Request& req) {
  auto auth = req[http::field::authorization];
  if (auth.empty()) return false;
  return app.client_keys->count(policy::tenant_of(std::string(auth))) > 0;
}

bool admin_authorized(const AppContext& app, const Request& req) {
  if (app.options.admin_token.empty()) return false;
  auto auth = req[http::field::authorization];
  return same_secret(std::string_view(auth.data(), auth.size()), "Bearer " + app.options.admin_token);
}

void handle_purge(AppContext& app, const Request& req, const std::shared_ptr<Responder>& r) {
  if (!admin_gate(app, req, *r, "purge")) return;
  json::Value body;
  if (auto err = json::parse(req.body(), body); err || !body.is_object())
    return respond_error(*r, api::ApiError::invalid("", "the body must be a JSON object with model, namespace or all"));
  const json::Value* all = body.find("all");
  const json::Value* model = body.find("model");
  const json::Value* ns = body.find("namespace");
  PurgeScope scope;
  if (all && all->is_bool() && all->as_bool()) {
    scope.kind = PurgeScope::Kind::all;
  } else if (model && model->is_string()) {
    scope = PurgeScope{PurgeScope::Kind::model, model->as_string()};
  } else if (ns && ns->is_string()) {
    scope = PurgeScope{PurgeScope::Kind::ns, ns->as_string()};
  } else {
    return respond_error(*r, api::ApiError::invalid("", "give one of {\"model\": ID}, {\"namespace\": NAME} or {\"all\": true}"));
  }
  Metrics* metrics = app.metrics;
  // "purged": entries this instance dropped from its memory tier. With a
  // shared tier, "shared_tier" says whether Redis took the epoch bump
  // ("invalidated": every instance stops serving the scope's entries now;
  // Redis reclaims them later, uncounted here) or not ("unavailable").
  app.purge(scope, [metrics, responder = r, shared = app.shared_tier](uint64_t purged, bool shared_ok) {
    metrics->invalidations(double(purged));
    std::string body = "{\"purged\":" + std::to_string(purged);
    if (shared) body += shared_ok ? ",\"shared_tier\":\"invalidated\"" : ",\"shared_tier\":\"unavailable\"";
    body += "}";
    responder->respond(json_response(200, std::move(body)));
  });
}

// `client`: the API a client key opens (with [auth] keys_file); the others
// are open (health, metrics) or take the admin token. `admin`: served by the
// admin listener, and by the API listener only when there is none.
struct Route {
  const char* path;
  http::verb method;
  bool client;
  bool admin;
};
constexpr Route kRoutes[] = {
    {"/v1/chat/completions", http::verb::post, true, false},
    {"/v1/models", http::verb::get, true, false},
    {"/healthz", http::verb::get, false, true},
    {"/metrics", http::verb::get, false, true},
    {"/reprox/v1/explain", http::verb::post, true, false},
    {"/reprox/v1/purge", http::verb::post, false, true},
    {"/reprox/v1/fallback/clear", http::verb::post, false, true},
    {"/reprox/v1/stats", http::verb::get, false, true},
    {"/reprox/status", http::verb::get, false, true},
    {"/tokenize", http::verb::post, true, false},
    {"/detokenize", http::verb::post, true, false},
    {"/apply-template", http::verb::post, true, false},
};

// The route for `path` on a listener of `exposure`; nullptr when it has none.
// /healthz is on both listeners (load balancers probe the API port).
const Route* find_route(std::string_view path, Exposure exposure) {
  for (const auto& route : kRoutes) {
    if (path != route.path) continue;
    const bool health = path == "/healthz";
    if (exposure == Exposure::kApi && route.admin && !health) return nullptr;
    if (exposure == Exposure::kAdmin && !route.admin) return nullptr;
    return &route;
  }
  return nullptr;
}

}  // namespace

std::string Router::allow_origin(const Request& request) const {
  if (!app_.cors.enabled() || exposure_ == Exposure::kAdmin) return {};
  auto origin = request[http::field::origin];
  return app_.cors.allow_origin(std::string_view(origin.data(), origin.size()));
}

// A browser sees a refusal without CORS fields as a network error; with
// them, its script can read the 413.
void Router::decorate_refusal(const Request& head, Response& response) {
  if (const std::string origin = allow_origin(head); !origin.empty())
    add_cors_fields(response, origin, app_.cors.per_origin());
}

void Router::handle(Request&& request, std::shared_ptr<Responder> responder) {
  std::string_view target = request.target();
  std::string_view path = target.substr(0, target.find('?'));
  const auto method = request.method();

  const Route* route = find_route(path, exposure_);
  const bool model_path = !route && exposure_ != Exposure::kAdmin && path.size() > kModelPrefix.size() &&
                          path.substr(0, kModelPrefix.size()) == kModelPrefix;
  std::shared_ptr<Responder> r =
      std::make_shared<CountingResponder>(std::move(responder), *app_.metrics, route ? route->path : "other");
  // Browsers on allowed origins may read every answer of the API listener,
  // errors included. Preflights carry no API key: they are answered first.
  const std::string allow_origin = this->allow_origin(request);
  if (!allow_origin.empty()) r = with_cors(r, allow_origin, app_.cors.per_origin());
  if (method == http::verb::options && (route || model_path || !app_.forward || is_preflight(request))) {
    const std::string_view methods = route ? methods_of(route->method) : model_path ? kGetMethods
                                         : app_.forward ? kForwardedMethods : std::string_view();
    if (methods.empty()) return respond_error(*r, not_found(path));
    return r->respond(options_answer(request, methods, allow_origin, app_.cors.per_origin()));
  }
  // Unknown paths are forwarded upstream: they need a client key too.
  if (exposure_ != Exposure::kAdmin && app_.client_keys && (!route || route->client) &&
      !client_key_allowed(app_, request))
    return respond_error(*r, api::ApiError{401, "Incorrect API key provided: this key is not allowed here",
                                           "invalid_request_error", "", "invalid_api_key"});
  if (!route) {
    if (app_.forward && exposure_ != Exposure::kAdmin) {
      app_.forward(std::move(request), [r](Response&& res) { r->respond(std::move(res)); });
      return;
    }
    if (model_path) {
      if (!method_matches(method, http::verb::get))
        return respond_method_not_allowed(*r, request.method_string(), kGetMethods);
      return handle_model(app_, path.substr(kModelPrefix.size()), *r);
    }
    return respond_error(*r, not_found(path));
  }
  if (!method_matches(method, route->method))
    return respond_method_not_allowed(*r, request.method_string(), methods_of(route->method));

  if (path == "/v1/chat/completions") return handle_chat(app_, std::move(request), r);
  if (path == "/v1/models") {
    if (app_.forward) {  // the upstream knows what it serves
      app_.forward(std::move(request), [r](Response&& res) { r->respond(std::move(res)); });
      return;
    }
    return handle_models(app_, *r);
  }
  if (path == "/healthz") return handle_health(app_, *r);
  if (path == "/metrics") return handle_metrics(app_, *r);
  if (path == "/reprox/v1/explain") return handle_explain(app_, request, r);
  if (path == "/reprox/v1/purge") return handle_purge(app_, request, r);
  if (path == "/reprox/v1/fallback/clear") return handle_fallback_clear(app_, request, *r);
  if (path == "/reprox/v1/stats") return handle_stats(app_, request, *r, admin_authorized(app_, request));
  if (path == "/reprox/status") return handle_status_page(app_, request, *r, admin_authorized(app_, request));
  // /tokenize, /detokenize, /apply-template
  if (app_.text) {
    auto [status, body] = app_.text->call(std::string(path), request.body());
    return r->respond(json_response(status, std::move(body)));
  }
  if (app_.forward) {
    app_.forward(std::move(request), [r](Response&& res) { r->respond(std::move(res)); });
    return;
  }
  respond_error(*r, not_found(path));
}

}  // namespace reprox
