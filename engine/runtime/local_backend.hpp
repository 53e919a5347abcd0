// The embedded engine behind the proxy's Backend interface, plus the text
// endpoints (/tokenize, /detokenize, /apply-template).
#pragma once

#include <memory>

#include "engine/runtime/engine.hpp"
#include "proxy/app/app_context.hpp"
#include "proxy/backend/backend.hpp"

namespace reprox::engine {

class LocalBackend final : public Backend, public TextEndpoints {
 public:
  explicit LocalBackend(EngineOptions options);  // loads; throws

  std::unique_ptr<GenerationHandle> generate(std::shared_ptr<const BackendRequest> request,
                                             std::shared_ptr<GenerationSink> sink, api::ApiError* error) override;
  std::vector<ModelInfo> models() const override;
  std::optional<std::string> resolve_model(const std::string& requested) const override;
  std::string fingerprint(const std::string& model_id) const override;
  int64_t default_max_tokens(const std::string& model_id) const override;
  std::optional<api::ApiError> check_supported(const api::ChatRequest& request) const override;

  std::pair<int, std::string> call(const std::string& path, const std::string& body) override;

  Engine& engine() { return *engine_; }

 private:
  std::unique_ptr<Engine> engine_;
  int64_t created_ = 0;
};

}  // namespace reprox::engine
