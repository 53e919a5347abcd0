// A model's chat template (Jinja, as in tokenizer_config.json), compiled
// once and rendered per request with Hugging Face's semantics: Jinja2 with
// trim_blocks and lstrip_blocks, tojson as json.dumps(ensure_ascii=False),
// raise_exception() and strftime_now() as globals. Unsupported constructs
// are refused by compile(), never discovered mid-request.
#pragma once

#include <memory>
#include <string>
#include <variant>

#include "common/json.hpp"
#include "engine/template/render_limits.hpp"

namespace reprox::tmpl {

struct CompiledBody;  // the syntax tree, see ast.hpp

struct RenderError {
  std::string message;
  bool raised_by_template = false;  // raise_exception() in the template: the request is at fault (HTTP 400)
};

class ChatTemplate {
 public:
  // Throws std::runtime_error "line L, column C: ..." on a syntax error or an
  // unsupported tag/filter/test/method/function.
  static std::shared_ptr<const ChatTemplate> compile(const std::string& source);

  // Reads chat_template (a string, or a list of {name, template} from which
  // "default" is taken), bos_token and eos_token (strings or {content: ...};
  // left empty when absent or null) from a tokenizer_config.json file.
  // Throws std::runtime_error naming the problem.
  static std::shared_ptr<const ChatTemplate> load_from_tokenizer_config(const std::string& path,
                                                                        std::string* bos_token,
                                                                        std::string* eos_token);

  // context: a JSON object of top-level variables (messages,
  // add_generation_prompt, bos_token, eos_token, tools, ...). Thread-safe.
  // A render past `limits` (steps, bytes, items) is a RenderError.
  std::variant<std::string, RenderError> render(const json::Value& context,
                                                const RenderLimits& limits = RenderLimits{}) const;

  ~ChatTemplate();

 private:
  ChatTemplate();
  std::unique_ptr<CompiledBody> body_;
};

}  // namespace reprox::tmpl
