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

}  // namespace reprox::engine
