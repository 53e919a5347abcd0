// The interface every generator implements: the embedded engine
// (proxy/backend/local_backend) and the upstream HTTP forwarder (upstream_backend).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"
#include "common/generation.hpp"
#include "common/generation_sink.hpp"

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
  // True when body fields reprox does not know reach the generator (the
  // upstream gets the client's body); the key then holds them.
  virtual bool forwards_other_fields() const { return false; }
};

}  // namespace reprox
