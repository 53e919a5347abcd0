#include "engine/runtime/prompt_builder.hpp"

#include <algorithm>

namespace reprox::engine {

PromptBuilder::PromptBuilder(const std::string& model_dir, std::shared_ptr<const tok::Tokenizer> tokenizer)
    : tokenizer_(std::move(tokenizer)) {
  template_ = tmpl::ChatTemplate::load_from_tokenizer_config(model_dir + "/tokenizer_config.json", &bos_token_,
                                                              &eos_token_);
}

std::optional<EngineError> PromptBuilder::render(const json::Value& messages, bool add_generation_prompt,
                                                   const json::Value& tools, std::string& prompt,
                                                   const json::Value& variables) const {
  json::Object ctx;
  ctx.emplace_back("messages", messages);
  ctx.emplace_back("add_generation_prompt", add_generation_prompt);
  ctx.emplace_back("bos_token", bos_token_);
  ctx.emplace_back("eos_token", eos_token_);
  if (!tools.is_null()) ctx.emplace_back("tools", tools);
  if (variables.is_object()) {
    const size_t own = ctx.size();
    for (const auto& [name, value] : variables.as_object()) {
      const bool taken = std::any_of(ctx.begin(), ctx.begin() + own, [&](const auto& m) { return m.first == name; });
      if (!taken) ctx.emplace_back(name, value);
    }
  }
  auto result = template_->render(json::Value(std::move(ctx)));
  if (auto* text = std::get_if<std::string>(&result)) {
    prompt = std::move(*text);
    return std::nullopt;
  }
  const auto& err = std::get<tmpl::RenderError>(result);
  if (err.raised_by_template) return EngineError{EngineErrc::kTemplateRaised, err.message};
  return EngineError{EngineErrc::kTemplateFailed, err.message};
}

namespace {

std::string_view trim_spaces(std::string_view s) {
  const char* const spaces = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(spaces);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(spaces) - first + 1);
}

}  // namespace

std::optional<EngineError> PromptBuilder::cut_after_final_message(const json::Value& messages, std::string& prompt) {
  const json::Value* content = nullptr;
  if (messages.is_array() && !messages.as_array().empty()) content = messages.as_array().back().find("content");
  if (!content || !content->is_string() || trim_spaces(content->as_string()).empty())
    return EngineError{EngineErrc::kTemplateFailed,
                       "continue_final_message needs a final message with text to continue"};
  const std::string& text = content->as_string();
  const std::string_view core = trim_spaces(text);
  const size_t at = prompt.rfind(core);
  if (at == std::string::npos)
    return EngineError{EngineErrc::kTemplateFailed,
                       "continue_final_message is set but the final message does not appear in the prompt the "
                       "chat template rendered"};
  // The message's trailing spaces stay when the template kept them.
  const std::string_view kept = std::string_view(text).substr(static_cast<size_t>(core.data() - text.data()));
  const size_t end = prompt.compare(at, kept.size(), kept) == 0 ? at + kept.size() : at + core.size();
  prompt.resize(end);
  return std::nullopt;
}

}  // namespace reprox::engine
