// Routes requests to endpoints and counts them in reprox_requests_total.
#pragma once

#include "proxy/app/app_context.hpp"
#include "proxy/server/http_session.hpp"

namespace reprox {

class Router final : public RequestHandler {
 public:
  explicit Router(AppContext& app) : app_(app) {}
  void handle(Request&& request, std::shared_ptr<Responder> responder) override;

 private:
  AppContext& app_;
};

}  // namespace reprox
