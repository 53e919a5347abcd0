#include "proxy/backend/local_backend.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "proxy/api/message_parser.hpp"
#include "proxy/backend/guide_spec.hpp"
#include "proxy/backend/local_request_checks.hpp"

namespace reprox {

namespace {

class CancelOnDrop final : public GenerationHandle {
 public:
  explicit CancelOnDrop(std::shared_ptr<std::atomic<bool>> flag) : flag_(std::move(flag)) {}
  ~CancelOnDrop() override { flag_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

std::pair<int, std::string> error_reply(const api::ApiError& e) { return {e.status, e.to_json()}; }

// Engine events go to the proxy's sink unchanged; engine errors become ApiErrors.
class SinkAdapter final : public engine::EngineSink {
 public:
  explicit SinkAdapter(std::shared_ptr<GenerationSink> out) : out_(std::move(out)) {}
  void on_event(GenEvent event) override { out_->on_event(std::move(event)); }
  void on_complete(const Usage& usage, const std::string& fp) override { out_->on_complete(usage, fp); }
  void on_error(const engine::EngineError& error) override { out_->on_error(to_api_error(error)); }

 private:
  std::shared_ptr<GenerationSink> out_;
};

}  // namespace

engine::SamplingParams sampling_params(const BackendRequest& r) {
  engine::SamplingParams p;
  p.temperature = r.chat.temperature;
  p.top_p = r.chat.top_p;
  // A top_k at or past the vocabulary keeps every token; clamped, not
  // narrowed, so that 2^32 + 1 does not become 1.
  p.top_k = static_cast<int32_t>(std::min<int64_t>(r.chat.top_k, std::numeric_limits<int32_t>::max()));
  p.presence_penalty = r.chat.presence_penalty;
  p.frequency_penalty = r.chat.frequency_penalty;
  p.min_p = r.chat.min_p;
  p.repetition_penalty = r.chat.repetition_penalty;
  p.min_tokens = r.chat.min_tokens;
  // Ids fit int32 (the parser's range); check_supported() refuses those past the vocabulary.
  p.allowed_ids.assign(r.chat.allowed_token_ids.begin(), r.chat.allowed_token_ids.end());
  for (const auto& [id, bias] : r.chat.logit_bias) p.logit_bias.emplace_back(static_cast<int32_t>(id), bias);
  p.seed = r.seed;
  p.n = static_cast<int>(r.chat.n);
  p.logprobs = r.chat.logprobs;
  p.top_logprobs = static_cast<int>(r.chat.top_logprobs);
  return p;
}

json::Value template_messages(const std::vector<api::ChatMessage>& messages) {
  json::Array out;
  out.reserve(messages.size());
  for (const auto& m : messages) {
    json::Object o;
    o.emplace_back("role", m.role);
    if (m.content.is_null())
      o.emplace_back("content", json::Value());
    else
      o.emplace_back("content", m.text());
    if (m.name) o.emplace_back("name", *m.name);
    if (!m.tool_calls.is_null()) o.emplace_back("tool_calls", m.tool_calls);
    if (!m.function_call.is_null()) o.emplace_back("function_call", m.function_call);
    if (m.tool_call_id) o.emplace_back("tool_call_id", *m.tool_call_id);
    out.emplace_back(std::move(o));
  }
  return json::Value(std::move(out));
}

std::vector<std::vector<int32_t>> bad_word_ids(const tok::Tokenizer& tokenizer, const std::vector<std::string>& words) {
  std::vector<std::vector<int32_t>> out;
  for (const std::string& word : words) {
    const size_t start = word.find_first_not_of(" \t\n\r");
    if (start == std::string::npos) continue;  // the parser refuses such words
    const std::string_view bare = std::string_view(word).substr(start);
    std::vector<int32_t> plain = tokenizer.encode(bare, false);
    if (plain.empty()) continue;
    // With a leading space the word may be other tokens: its form inside a
    // text. Kept when it is a different word token of the same length, as
    // vLLM keeps it.
    std::vector<int32_t> spaced = tokenizer.encode(" " + std::string(bare), false);
    const bool distinct = !spaced.empty() && spaced.size() == plain.size() && spaced[0] != plain[0];
    out.push_back(std::move(plain));
    if (distinct) out.push_back(std::move(spaced));
  }
  return out;
}

std::optional<api::ApiError> render_prompt(const engine::PromptBuilder& prompts, const json::Value& messages,
                                          const PromptOptions& options, std::string& prompt) {
  if (auto e = prompts.render(messages, options.add_generation_prompt, options.tools, prompt, options.variables))
    return to_api_error(*e);
  if (options.continue_final_message) {
    if (auto e = engine::PromptBuilder::cut_after_final_message(messages, prompt)) return to_api_error(*e);
  }
  return std::nullopt;
}

api::ApiError to_api_error(const engine::EngineError& e) {
  using engine::EngineErrc;
  switch (e.code) {
    case EngineErrc::kQueueFull:
      return api::ApiError{429, e.message, "rate_limit_error", "", "queue_full"};
    case EngineErrc::kTooLarge:
      return api::ApiError{400, e.message, "invalid_request_error", "max_tokens", "context_length_exceeded"};
    case EngineErrc::kContextExceeded:
      return api::ApiError{400, e.message, "invalid_request_error", "messages", "context_length_exceeded"};
    case EngineErrc::kTemplateRaised:
      return api::ApiError::invalid("messages", e.message);
    case EngineErrc::kTemplateFailed:
      return api::ApiError{400, "the model's chat template could not render these messages: " + e.message,
                           "invalid_request_error", "messages", "template_error"};
    case EngineErrc::kOutOfWorkingMemory:
      return api::ApiError{503, e.message, "server_error", "", "engine_overloaded"};
    case EngineErrc::kNumeric:
      return api::ApiError{500, e.message, "server_error", "", "numeric_error"};
    case EngineErrc::kInvalidSampling:
      return api::ApiError::invalid("", e.message);
    case EngineErrc::kForwardFailed:
      break;
  }
  return api::ApiError{500, e.message, "server_error", "", ""};
}

LocalBackend::LocalBackend(engine::EngineOptions options) : engine_(std::make_unique<engine::Engine>(std::move(options))) {
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::unique_ptr<GenerationHandle> LocalBackend::generate(std::shared_ptr<const BackendRequest> request,
                                                         std::shared_ptr<GenerationSink> sink, api::ApiError* error) {
  const auto& chat = request->chat;
  std::string prompt;
  const PromptOptions options{chat.add_generation_prompt, chat.continue_final_message, chat.tools,
                              chat.chat_template_kwargs};
  if (auto e = render_prompt(engine_->prompts(), template_messages(chat.messages), options, prompt)) {
    *error = std::move(*e);
    return nullptr;
  }
  engine::EngineJob job;
  job.prompt = engine_->prompts().encode(prompt);
  if (chat.truncate_prompt_tokens) {  // keep the last k tokens
    const int64_t k = *chat.truncate_prompt_tokens < 0 ? engine_->max_positions() : *chat.truncate_prompt_tokens;
    if (static_cast<int64_t>(job.prompt.size()) > k) job.prompt.erase(job.prompt.begin(), job.prompt.end() - k);
  }
  job.max_tokens = request->max_tokens;  // the engine clips it to the context window
  job.sampling = sampling_params(*request);
  job.sampling.bad_words = bad_word_ids(*engine_->tokenizer(), chat.bad_words);
  job.stop = chat.stop;
  // Ids fit int32 (the parser's range); the engine refuses those past its vocabulary.
  job.stop_token_ids.assign(chat.stop_token_ids.begin(), chat.stop_token_ids.end());
  job.ignore_eos = chat.ignore_eos;
  job.include_stop = chat.include_stop_str_in_output;
  job.skip_special = chat.skip_special_tokens;
  job.logprob_token_ids = chat.return_tokens_as_token_ids;
  if (auto e = guide_spec(chat, &job.guide)) {
    *error = std::move(*e);
    return nullptr;
  }
  job.tenant = request->tenant;
  job.sink = std::make_shared<SinkAdapter>(std::move(sink));
  job.cancelled = std::make_shared<std::atomic<bool>>(false);
  auto handle = std::make_unique<CancelOnDrop>(job.cancelled);
  if (auto refused = engine_->submit(std::move(job))) {
    *error = to_api_error(*refused);
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
  if (auto e = unreadable_part(request.messages)) return e;
  // Checked here, before the ids narrow to the engine's int32: a key past
  // the vocabulary must not wrap onto a real token.
  const int32_t vocab = engine_->vocab_size();
  for (const auto& [id, bias] : request.logit_bias) {
    if (id < 0 || id >= vocab)
      return api::ApiError::invalid("logit_bias", "Invalid 'logit_bias': key '" + std::to_string(id) +
                                                      "' is not a token id of this model (0.." +
                                                      std::to_string(vocab - 1) + ").");
  }
  auto past_vocabulary = [vocab](const char* param, const std::vector<int64_t>& ids) -> std::optional<api::ApiError> {
    for (const int64_t id : ids) {
      if (id >= vocab)
        return api::ApiError::invalid(param, "Invalid '" + std::string(param) + "': " + std::to_string(id) +
                                                 " is not a token id of this model (0.." +
                                                 std::to_string(vocab - 1) + ").");
    }
    return std::nullopt;
  };
  if (auto e = past_vocabulary("stop_token_ids", request.stop_token_ids)) return e;
  if (auto e = past_vocabulary("allowed_token_ids", request.allowed_token_ids)) return e;
  if (auto e = unsupported_option(request)) return e;
  engine::GuideSpec guide;
  return guide_spec(request, &guide);
}

std::pair<int, std::string> LocalBackend::call(const std::string& path, const std::string& body) {
  json::Value req;
  if (auto err = json::parse(body, req); err || !req.is_object())
    return error_reply(api::ApiError::invalid("", "the body must be a JSON object"));
  if (const json::Value* model = req.find("model"); model && model->is_string() && !resolve_model(model->as_string()))
    return error_reply(api::ApiError::model_not_found(model->as_string()));
  const auto& prompts = engine_->prompts();
  auto render = [&](std::string& prompt) -> std::optional<api::ApiError> {
    const json::Value* messages = req.find("messages");
    if (!messages || !messages->is_array() || messages->as_array().empty())
      return api::ApiError::invalid("messages", "messages must be a non-empty array");
    // The messages as a chat request's are read and rendered, so that these
    // endpoints show the prompt generation would see.
    std::vector<api::ChatMessage> parsed;
    if (auto e = api::parse_messages(*messages, parsed)) return e;
    if (auto e = unreadable_part(parsed)) return e;
    const json::Value* agp = req.find("add_generation_prompt");
    const json::Value* cfm = req.find("continue_final_message");
    PromptOptions options;
    options.add_generation_prompt = agp && agp->is_bool() ? agp->as_bool() : true;
    options.continue_final_message = cfm && cfm->is_bool() && cfm->as_bool();
    if (options.continue_final_message && options.add_generation_prompt)
      return api::ApiError::invalid("continue_final_message",
                                    "continue_final_message needs add_generation_prompt set to false");
    if (const json::Value* tools = req.find("tools")) options.tools = *tools;
    const json::Value* kwargs = req.find("chat_template_kwargs");
    if (kwargs && !kwargs->is_null()) {
      if (auto e = api::check_template_kwargs(*kwargs, "chat_template_kwargs")) return e;
      options.variables = *kwargs;
    }
    return render_prompt(prompts, template_messages(parsed), options, prompt);
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

}  // namespace reprox
