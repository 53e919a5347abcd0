// Fuzz target: the chat-template lexer, parser and evaluator. The input is
// a template source, rendered with a fixed context (a short conversation
// with a tool call, tools, bos/eos tokens) under small render limits.
// Properties: compile() either succeeds or throws std::runtime_error; a
// render returns the output or a RenderError, within the limits (so a
// hostile template ends quickly and within memory), and rendering is
// deterministic.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>

#include "common/json.hpp"
#include "engine/template/chat_template.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

constexpr const char* kContext = R"({
  "messages": [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "What is the weather in Paris? \u00e9\u4e2d"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
    {"role": "assistant", "content": "<think>ok</think>It is 18C."},
    {"role": "user", "content": [{"type": "text", "text": "Thanks"}]}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
  "add_generation_prompt": true,
  "bos_token": "<s>",
  "eos_token": "</s>"
})";

// Small enough that a render at the limit takes milliseconds under ASan.
reprox::tmpl::RenderLimits fuzz_limits() {
  reprox::tmpl::RenderLimits limits;
  limits.max_steps = 200000;
  limits.max_bytes = 1 << 20;
  limits.max_items = 1 << 16;
  return limits;
}

const reprox::json::Value& context() {
  static const reprox::json::Value value = [] {
    reprox::json::Value v;
    if (reprox::json::parse(kContext, v)) std::abort();
    return v;
  }();
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const reprox::tmpl::ChatTemplate> tmpl;
  try {
    tmpl = reprox::tmpl::ChatTemplate::compile(source);
  } catch (const std::runtime_error&) {
    return 0;  // a refused template
  }
  const auto limits = fuzz_limits();
  const auto first = tmpl->render(context(), limits);
  if (const auto* out = std::get_if<std::string>(&first))
    FUZZ_CHECK(out->size() <= limits.max_bytes, "the output is within max_bytes");
  else
    FUZZ_CHECK(!std::get<reprox::tmpl::RenderError>(first).message.empty(), "a render error explains itself");
  const auto second = tmpl->render(context(), limits);
  FUZZ_CHECK(first.index() == second.index(), "rendering is deterministic");
  if (const auto* out = std::get_if<std::string>(&first))
    FUZZ_CHECK(*out == std::get<std::string>(second) || source.find("strftime_now") != std::string::npos,
               "rendering is deterministic");
  return 0;
}
