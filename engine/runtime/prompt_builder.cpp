#include "engine/runtime/prompt_builder.hpp"

namespace reprox::engine {

PromptBuilder::PromptBuilder(const std::string& model_dir, std::shared_ptr<const tok::Tokenizer> tokenizer)
    : tokenizer_(std::move(tokenizer)) {
  template_ = tmpl::ChatTemplate::load_from_tokenizer_config(model_dir + "/tokenizer_config.json", &bos_token_,
                                                              &eos_token_);
}

json::Value PromptBuilder::messages_json(const std::vector<api::ChatMessage>& messages) {
  json::Array out;
  out.reserve(messages.size());
  for (const auto& m : messages) {
    json::Object o;
    o.emplace_back("role", m.role);
    // Templates expect text; non-text parts cannot be seen by a text model.
    if (m.content.is_null())
      o.emplace_back("content", json::Value());
    else
      o.emplace_back("content", m.text());
    if (m.name) o.emplace_back("name", *m.name);
    if (!m.tool_calls.is_null()) o.emplace_back("tool_calls", m.tool_calls);
    if (m.tool_call_id) o.emplace_back("tool_call_id", *m.tool_call_id);
    out.emplace_back(std::move(o));
  }
  return json::Value(std::move(out));
}

std::optional<api::ApiError> PromptBuilder::render(const json::Value& messages, bool add_generation_prompt,
                                                   const json::Value& tools, std::string& prompt) const {
  json::Object ctx;
  ctx.emplace_back("messages", messages);
  ctx.emplace_back("add_generation_prompt", add_generation_prompt);
  ctx.emplace_back("bos_token", bos_token_);
  ctx.emplace_back("eos_token", eos_token_);
  if (!tools.is_null()) ctx.emplace_back("tools", tools);
  auto result = template_->render(json::Value(std::move(ctx)));
  if (auto* text = std::get_if<std::string>(&result)) {
    prompt = std::move(*text);
    return std::nullopt;
  }
  const auto& err = std::get<tmpl::RenderError>(result);
  if (err.raised_by_template) return api::ApiError::invalid("messages", err.message);
  return api::ApiError{400, "the model's chat template could not render these messages: " + err.message,
                       "invalid_request_error", "messages", "template_error"};
}

}  // namespace reprox::engine
