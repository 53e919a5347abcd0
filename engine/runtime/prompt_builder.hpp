// Chat messages -> the model's prompt text (its own chat template) -> ids.
// Torch-free and thread-safe (const after construction).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/template/chat_template.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "common/json.hpp"
#include "engine/runtime/engine_job.hpp"

namespace reprox::engine {

class PromptBuilder {
 public:
  // Loads the chat template and special tokens from
  // <dir>/tokenizer_config.json; throws naming the problem.
  PromptBuilder(const std::string& model_dir, std::shared_ptr<const tok::Tokenizer> tokenizer);

  // messages: a JSON array of {role, content, ...}, as the template reads
  // them. `variables`: null, or an object of extra template variables (such
  // as enable_thinking); a name the builder sets itself (messages, tools,
  // add_generation_prompt, bos_token, eos_token) keeps the builder's value.
  // A template's raise_exception() is kTemplateRaised (the messages are at
  // fault); any other render failure is kTemplateFailed.
  std::optional<EngineError> render(const json::Value& messages, bool add_generation_prompt, const json::Value& tools,
                                      std::string& prompt, const json::Value& variables = json::Value()) const;
  // HF's continue_final_message: cuts `prompt` (rendered without a
  // generation prompt) right after the final message's text, so that the
  // model continues that message. The text is the last message's content
  // (a string), found by its last occurrence with surrounding spaces
  // trimmed, as transformers does; kTemplateFailed when the template did not
  // keep it (or the message has no text).
  static std::optional<EngineError> cut_after_final_message(const json::Value& messages, std::string& prompt);
  // The prompt's token ids: special-token text in the rendered prompt
  // becomes special ids; nothing is prepended (the template writes bos).
  std::vector<int32_t> encode(const std::string& prompt) const { return tokenizer_->encode(prompt, true); }

  const std::string& eos_token() const { return eos_token_; }

 private:
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  std::shared_ptr<const tmpl::ChatTemplate> template_;
  std::string bos_token_, eos_token_;
};

}  // namespace reprox::engine
