// The embedded engine behind the proxy's Backend interface, plus the text
// endpoints (/tokenize, /detokenize, /apply-template).
//
// This is where OpenAI meets the engine: a BackendRequest becomes an
// engine::EngineJob (messages -> template values -> prompt ids, the API's
// sampling fields -> engine::SamplingParams), and engine errors become
// ApiErrors with their HTTP statuses.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "common/json.hpp"
#include "engine/runtime/engine.hpp"
#include "proxy/app/app_context.hpp"
#include "proxy/backend/backend.hpp"

namespace reprox {

class LocalBackend final : public Backend, public TextEndpoints {
 public:
  explicit LocalBackend(engine::EngineOptions options);  // loads; throws

  std::unique_ptr<GenerationHandle> generate(std::shared_ptr<const BackendRequest> request,
                                             std::shared_ptr<GenerationSink> sink, api::ApiError* error) override;
  std::vector<ModelInfo> models() const override;
  std::optional<std::string> resolve_model(const std::string& requested) const override;
  std::string fingerprint(const std::string& model_id) const override;
  int64_t default_max_tokens(const std::string& model_id) const override;
  std::optional<api::ApiError> check_supported(const api::ChatRequest& request) const override;

  std::pair<int, std::string> call(const std::string& path, const std::string& body) override;

  engine::Engine& engine() { return *engine_; }

 private:
  std::unique_ptr<engine::Engine> engine_;
  int64_t created_ = 0;
};

// The translations, exposed for tests.
// The API's sampling fields, the effective seed and n.
engine::SamplingParams sampling_params(const BackendRequest& request);
// Messages as the chat template reads them: text content (non-text parts
// cannot be seen by a text model), name, tool_calls, tool_call_id.
json::Value template_messages(const std::vector<api::ChatMessage>& messages);
// vLLM's bad_words as token id sequences: each word without its leading
// spaces, and, when it tokenizes to as many ids of another first word
// token, with one leading space (its form inside a text).
std::vector<std::vector<int32_t>> bad_word_ids(const tok::Tokenizer& tokenizer, const std::vector<std::string>& words);
// An engine error as the client sees it: its status, type, param and code.
api::ApiError to_api_error(const engine::EngineError& error);

// How messages become a prompt: with the assistant header or not, the
// final message continued or not, tools and extra template variables (null
// when absent).
struct PromptOptions {
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  json::Value tools;
  json::Value variables;
};
// `messages` (template_messages()) rendered by the model's template, as
// generation and the text endpoints do; a template failure as an ApiError.
std::optional<api::ApiError> render_prompt(const engine::PromptBuilder& prompts, const json::Value& messages,
                                           const PromptOptions& options, std::string& prompt);

}  // namespace reprox
