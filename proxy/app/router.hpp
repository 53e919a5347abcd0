// Routes requests to endpoints and counts them in reprox_requests_total.
#pragma once

#include "proxy/app/app_context.hpp"
#include "proxy/server/http_session.hpp"

namespace reprox {

// Which routes a listener serves. With `[admin] listen`, the API listener
// serves kApi (the admin routes answer 404 there, as if absent) and the
// admin listener kAdmin: /metrics, /healthz and the /reprox admin endpoints,
// nothing forwarded upstream. Without it, one listener serves kAll.
enum class Exposure { kAll, kApi, kAdmin };

class Router final : public RequestHandler {
 public:
  explicit Router(AppContext& app, Exposure exposure = Exposure::kAll) : app_(app), exposure_(exposure) {}
  void handle(Request&& request, std::shared_ptr<Responder> responder) override;
  void decorate_refusal(const Request& head, Response& response) override;

 private:
  // The Access-Control-Allow-Origin value for this request; empty: none.
  std::string allow_origin(const Request& request) const;

  AppContext& app_;
  Exposure exposure_;
};

}  // namespace reprox
