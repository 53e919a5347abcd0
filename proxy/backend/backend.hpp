// The interface every generator implements: the embedded engine
// (engine/local_backend) and the upstream HTTP forwarder (upstream_backend).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/api/api_error.hpp"
#include "proxy/api/chat_request.hpp"
#include "proxy/cache/generation.hpp"

namespace reprox {

struct BackendRequest {
  api::ChatRequest chat;   // validated
  std::string model_id;    // resolved model id
  uint64_t seed = 0;       // effective seed (given or injected)
  int64_t max_tokens = 0;  // effective completion limit
  std::string tenant;      // hex SHA-256 of the bearer token; salts KV reuse
  // The client's Authorization header, for upstreams that authenticate
  // (used only when no upstream api_key is configured).
  std::string authorization;
};

// Receives one generation's output. Calls for one generation come from one
// backend thread at a time, in order; they may come on any thread, so an
// implementation posts to its own executor. After on_complete or on_error
// no further call is made.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  virtual void on_event(GenEvent event) = 0;
  // Every choice has finished. `system_fingerprint` may differ from the
  // backend's advertised one only for upstreams that report their own.
  virtual void on_complete(const Usage& usage, const std::string& system_fingerprint) = 0;
  virtual void on_error(const api::ApiError& error) = 0;
};

// Dropping the handle cancels the generation. The sink may still receive
// calls that were already under way; it must stay valid (it is shared).
class GenerationHandle {
 public:
  virtual ~GenerationHandle() = default;
};

struct ModelInfo {
  std::string id;
  std::string owned_by = "reprox";
  int64_t created = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Starts a generation. On immediate refusal (queue full, unknown model,
  // unsupported feature) returns nullptr and sets *error.
  virtual std::unique_ptr<GenerationHandle> generate(std::shared_ptr<const BackendRequest> request,
                                                     std::shared_ptr<GenerationSink> sink,
                                                     api::ApiError* error) = 0;

  virtual std::vector<ModelInfo> models() const = 0;
  // Resolves a requested model name ("" = default) to the served id, or nullopt.
  virtual std::optional<std::string> resolve_model(const std::string& requested) const = 0;
  // system_fingerprint for the key's `fp`; changes when the model, engine
  // build or numeric mode changes.
  virtual std::string fingerprint(const std::string& model_id) const = 0;
  // The completion limit used when the request gives none.
  virtual int64_t default_max_tokens(const std::string& model_id) const = 0;
  // A 400 for request features this backend cannot honour (tools, ...).
  virtual std::optional<api::ApiError> check_supported(const api::ChatRequest& request) const = 0;
  // Ready to serve (model loaded, upstream configured).
  virtual bool ready() const { return true; }
};

}  // namespace reprox
