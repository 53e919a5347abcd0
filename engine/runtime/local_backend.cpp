#include "engine/runtime/local_backend.hpp"

#include <chrono>

namespace reprox::engine {

namespace {

class CancelOnDrop final : public GenerationHandle {
 public:
  explicit CancelOnDrop(std::shared_ptr<std::atomic<bool>> flag) : flag_(std::move(flag)) {}
  ~CancelOnDrop() override { flag_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

std::pair<int, std::string> error_reply(const api::ApiError& e) { return {e.status, e.to_json()}; }

}  // namespace

LocalBackend::LocalBackend(EngineOptions options) : engine_(std::make_unique<Engine>(std::move(options))) {
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::unique_ptr<GenerationHandle> LocalBackend::generate(std::shared_ptr<const BackendRequest> request,
                                                         std::shared_ptr<GenerationSink> sink, api::ApiError* error) {
  const auto& chat = request->chat;
  std::string prompt;
  if (auto e = engine_->prompts().render(PromptBuilder::messages_json(chat.messages), true, chat.tools, prompt)) {
    *error = *e;
    return nullptr;
  }
  EngineJob job;
  job.prompt = engine_->prompts().encode(prompt);
  const int64_t room = engine_->max_positions() - static_cast<int64_t>(job.prompt.size());
  if (room < 1) {
    *error = api::ApiError{400,
                           "This model's maximum context length is " + std::to_string(engine_->max_positions()) +
                               " tokens; the messages use " + std::to_string(job.prompt.size()),
                           "invalid_request_error", "messages", "context_length_exceeded"};
    return nullptr;
  }
  job.max_tokens = std::min(request->max_tokens, room);
  job.request = std::move(request);
  job.sink = std::move(sink);
  job.cancelled = std::make_shared<std::atomic<bool>>(false);
  auto handle = std::make_unique<CancelOnDrop>(job.cancelled);
  switch (engine_->submit(std::move(job))) {
    case SubmitResult::kOk: break;
    case SubmitResult::kQueueFull:
      *error = api::ApiError{429, "the engine queue is full; retry shortly", "rate_limit_error", "", "queue_full"};
      return nullptr;
    case SubmitResult::kTooLarge:
      *error = api::ApiError{400, "the prompt plus max_tokens (times n) needs more KV memory than this engine's "
                                  "working_kv allows; lower max_tokens or n",
                             "invalid_request_error", "max_tokens", "context_length_exceeded"};
      return nullptr;
  }
  return handle;
}

std::vector<ModelInfo> LocalBackend::models() const { return {ModelInfo{engine_->model_id(), "reprox", created_}}; }

std::optional<std::string> LocalBackend::resolve_model(const std::string& requested) const {
  if (requested.empty() || requested == engine_->model_id()) return engine_->model_id();
  return std::nullopt;
}

std::string LocalBackend::fingerprint(const std::string&) const { return engine_->system_fingerprint(); }

int64_t LocalBackend::default_max_tokens(const std::string&) const { return engine_->options().default_max_tokens; }

std::optional<api::ApiError> LocalBackend::check_supported(const api::ChatRequest& request) const {
  if (!request.tools.is_null())
    return api::ApiError::invalid("tools", "the embedded engine does not support tool calling; use --upstream");
  if (!request.response_format.is_null()) {
    const json::Value* type = request.response_format.find("type");
    if (!type || !type->is_string() || type->as_string() != "text")
      return api::ApiError::invalid("response_format",
                                    "the embedded engine supports only response_format {\"type\": \"text\"}");
  }
  return std::nullopt;
}

std::pair<int, std::string> LocalBackend::call(const std::string& path, const std::string& body) {
  json::Value req;
  if (auto err = json::parse(body, req); err || !req.is_object())
    return error_reply(api::ApiError::invalid("", "the body must be a JSON object"));
  if (const json::Value* model = req.find("model"); model && model->is_string() && !resolve_model(model->as_string()))
    return error_reply(api::ApiError{404, "The model '" + model->as_string() + "' does not exist",
                                     "invalid_request_error", "model", "model_not_found"});
  const auto& prompts = engine_->prompts();
  auto render = [&](std::string& prompt) -> std::optional<api::ApiError> {
    const json::Value* messages = req.find("messages");
    if (!messages || !messages->is_array() || messages->as_array().empty())
      return api::ApiError::invalid("messages", "messages must be a non-empty array");
    const json::Value* agp = req.find("add_generation_prompt");
    bool add = agp && agp->is_bool() ? agp->as_bool() : true;
    const json::Value* tools = req.find("tools");
    return prompts.render(*messages, add, tools ? *tools : json::Value(), prompt);
  };

  if (path == "/tokenize") {
    std::string prompt;
    if (const json::Value* p = req.find("prompt")) {
      if (!p->is_string()) return error_reply(api::ApiError::invalid("prompt", "prompt must be a string"));
      prompt = p->as_string();
    } else if (auto e = render(prompt)) {
      return error_reply(*e);
    }
    auto ids = prompts.encode(prompt);
    std::string out = "{\"tokens\":[";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out.push_back(',');
      json::write_int(out, ids[i]);
    }
    out += "],\"count\":";
    json::write_int(out, static_cast<int64_t>(ids.size()));
    out += ",\"max_model_len\":";
    json::write_int(out, engine_->max_positions());
    out += "}";
    return {200, out};
  }
  if (path == "/detokenize") {
    const json::Value* tokens = req.find("tokens");
    if (!tokens || !tokens->is_array())
      return error_reply(api::ApiError::invalid("tokens", "tokens must be an array of token ids"));
    std::vector<int32_t> ids;
    const int64_t vocab = engine_->tokenizer()->vocab_size();
    for (size_t i = 0; i < tokens->as_array().size(); ++i) {
      const auto& t = tokens->as_array()[i];
      if (!t.is_integer() || t.as_int() < 0 || t.as_int() >= vocab)
        return error_reply(api::ApiError::invalid("tokens[" + std::to_string(i) + "]",
                                                  "not a token id of this model (0.." + std::to_string(vocab - 1) + ")"));
      ids.push_back(static_cast<int32_t>(t.as_int()));
    }
    std::string out = "{\"prompt\":";
    json::write_string(out, json::utf8_lossy(engine_->tokenizer()->decode(ids, false)));
    out += "}";
    return {200, out};
  }
  // /apply-template
  std::string prompt;
  if (auto e = render(prompt)) return error_reply(*e);
  std::string out = "{\"prompt\":";
  json::write_string(out, prompt);
  out += "}";
  return {200, out};
}

}  // namespace reprox::engine
