// `reprox serve`: builds the backend, stores and server from a Config and
// runs until SIGINT/SIGTERM, then drains.
#pragma once

#include <functional>
#include <memory>

#include "conf/config.hpp"
#include "proxy/app/app_context.hpp"

namespace reprox {

// The embedded engine plugs in here (engine/ registers a factory), so the
// proxy never includes torch headers.
struct LocalBackendParts {
  std::unique_ptr<Backend> backend;
  TextEndpoints* text = nullptr;  // owned by backend
  std::function<void(Metrics&)> before_scrape;  // e.g. KV reuse gauges
};
using LocalBackendFactory = std::function<LocalBackendParts(const Config&)>;

int run_serve(const Config& config, const LocalBackendFactory& make_local);

}  // namespace reprox
