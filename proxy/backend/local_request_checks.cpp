#include "proxy/backend/local_request_checks.hpp"

#include <string>
#include <string_view>

namespace reprox {

namespace {

// What a vLLM extension's value must be for the engine to answer as vLLM
// would without it.
enum class Neutral { kNone, kFalse, kTrue, kOne };

struct Extension {
  const char* name;
  Neutral neutral;
};

// vLLM's chat completion extensions the engine does not implement. (Those
// it does, from top_k to guided_choice, are fields of the request;
// guided_json is read by guide_spec.hpp.
// spaces_between_special_tokens changes nothing: tokenizer.json decoding
// ignores it, as Hugging Face's fast tokenizers and vLLM's detokenizer for
// them do.)
constexpr Extension kExtensions[] = {
    {"length_penalty", Neutral::kOne},
    {"use_beam_search", Neutral::kFalse},
    {"prompt_logprobs", Neutral::kNone},
    {"guided_regex", Neutral::kNone},
    {"guided_grammar", Neutral::kNone},
    {"structural_tag", Neutral::kNone},
    {"echo", Neutral::kFalse},
    {"chat_template", Neutral::kNone},
    {"documents", Neutral::kNone},
    {"logits_processors", Neutral::kNone},
};

bool is_neutral(const json::Value& v, Neutral neutral) {
  switch (neutral) {
    case Neutral::kFalse: return v.is_bool() && !v.as_bool();
    case Neutral::kTrue: return v.is_bool() && v.as_bool();
    case Neutral::kOne: return v.is_number() && v.as_double() == 1.0;
    case Neutral::kNone: return false;
  }
  return false;
}

api::ApiError unimplemented(const char* name) {
  return api::ApiError::invalid(name, std::string("the embedded engine does not implement '") + name +
                                          "' (a vLLM extension); leave it out or use --upstream");
}

std::optional<api::ApiError> unimplemented_extension(const api::ChatRequest& request) {
  const json::Value& raw = request.raw;
  for (const Extension& ext : kExtensions) {
    const json::Value* v = raw.find(ext.name);
    if (v && !v->is_null() && !is_neutral(*v, ext.neutral)) return unimplemented(ext.name);
  }
  // best_of = n draws nothing extra.
  if (const json::Value* v = raw.find("best_of"); v && !v->is_null() &&
      !(v->is_number() && (v->as_double() == 1.0 || v->as_double() == double(request.n))))
    return unimplemented("best_of");
  return std::nullopt;
}

}  // namespace

std::optional<api::ApiError> unreadable_part(const std::vector<api::ChatMessage>& messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].content.is_array()) continue;
    const json::Array& parts = messages[i].content.as_array();
    for (size_t j = 0; j < parts.size(); ++j) {
      const json::Value* type = parts[j].find("type");
      if (!type || !type->is_string() || type->as_string() == "text" || type->as_string() == "refusal") continue;
      return api::ApiError::invalid(
          "messages[" + std::to_string(i) + "].content[" + std::to_string(j) + "].type",
          "Invalid content part type '" + type->as_string() +
              "': the embedded engine reads text only; serve models that take images, audio or files "
              "with --upstream.");
    }
  }
  return std::nullopt;
}

std::optional<api::ApiError> unsupported_option(const api::ChatRequest& request) {
  auto refuse = [](const char* param, const std::string& what) {
    return api::ApiError::invalid(param, "the embedded engine " + what + "; use --upstream");
  };
  const json::Value& raw = request.raw;
  auto present = [&raw](const char* name) {
    const json::Value* v = raw.find(name);
    return v && !v->is_null() ? v : nullptr;
  };
  auto is_string = [](const json::Value& v, std::string_view s) { return v.is_string() && v.as_string() == s; };
  if (!request.tools.is_null()) return refuse("tools", "does not support tool calling");
  if (present("functions")) return refuse("functions", "does not support function calling");  // tools' old name
  if (const json::Value& c = request.tool_choice; !c.is_null() && !is_string(c, "none") && !is_string(c, "auto"))
    return refuse("tool_choice", "does not support tool calling");
  if (const json::Value* c = present("function_call"); c && !is_string(*c, "none") && !is_string(*c, "auto"))
    return refuse("function_call", "does not support function calling");
  if (const json::Value* m = present("modalities"); m && m->is_array())
    for (const auto& modality : m->as_array())
      if (!is_string(modality, "text")) return refuse("modalities", "answers with text only");
  if (present("audio")) return refuse("audio", "answers with text only");
  if (present("web_search_options")) return refuse("web_search_options", "does not search the web");
  return unimplemented_extension(request);
}

}  // namespace reprox
