#include "proxy/api/message_parser.hpp"

#include <string>
#include <string_view>

#include "proxy/api/request_checks.hpp"

namespace reprox::api {
namespace {

using checks::Check;

bool is_known_role(std::string_view r) {
  return r == "system" || r == "developer" || r == "user" || r == "assistant" || r == "tool" || r == "function";
}

bool is_known_part(std::string_view t) {
  return t == "text" || t == "image_url" || t == "input_audio" || t == "refusal" || t == "file";
}

// Which content part types each role may send (as OpenAI enforces).
bool role_allows_part(std::string_view role, std::string_view type) {
  if (type == "text") return true;
  if (role == "user") return type == "image_url" || type == "input_audio" || type == "file";
  if (role == "assistant") return type == "refusal";
  return false;
}

Check require_string(const json::Value& object, std::string_view key, const std::string& param) {
  const json::Value* v = checks::present(object, key);
  if (!v) return checks::missing(param);
  if (!v->is_string()) return checks::wrong_type(param, "a string", *v);
  return std::nullopt;
}

Check require_object(const json::Value& object, std::string_view key, const std::string& param,
                     const json::Value** out) {
  const json::Value* v = checks::present(object, key);
  if (!v) return checks::missing(param);
  if (!v->is_object()) return checks::wrong_type(param, "an object", *v);
  *out = v;
  return std::nullopt;
}

Check check_part(const json::Value& part, std::string_view role, const std::string& param) {
  if (!part.is_object()) return checks::wrong_type(param, "an object", part);
  const json::Value* type = checks::present(part, "type");
  if (!type) return checks::missing(param + ".type");
  if (!type->is_string()) return checks::wrong_type(param + ".type", "a string", *type);
  const std::string& t = type->as_string();
  if (!is_known_part(t))
    return checks::bad_value(param + ".type", "unknown content part type '" + t +
                                                  "'; expected one of text, image_url, input_audio, refusal, file.");
  if (!role_allows_part(role, t))
    return checks::bad_value(param + ".type", "content part type '" + t + "' is not allowed in " +
                                                  std::string(role) + " messages.");
  const json::Value* inner = nullptr;
  if (t == "text") return require_string(part, "text", param + ".text");
  if (t == "refusal") return require_string(part, "refusal", param + ".refusal");
  if (t == "image_url") {
    if (auto e = require_object(part, "image_url", param + ".image_url", &inner)) return e;
    return require_string(*inner, "url", param + ".image_url.url");
  }
  if (t == "input_audio") {
    if (auto e = require_object(part, "input_audio", param + ".input_audio", &inner)) return e;
    if (auto e = require_string(*inner, "data", param + ".input_audio.data")) return e;
    return require_string(*inner, "format", param + ".input_audio.format");
  }
  return require_object(part, "file", param + ".file", &inner);  // "file"
}

// Validates content and normalises an all-text parts array to one string.
Check read_content(const json::Value& msg, const std::string& param, ChatMessage& out, bool may_be_null) {
  const json::Value* content = checks::present(msg, "content");
  if (!content) {
    if (may_be_null) return std::nullopt;  // out.content stays null
    return checks::missing(param);
  }
  if (content->is_string()) {
    out.content = *content;
    return std::nullopt;
  }
  if (!content->is_array()) return checks::wrong_type(param, "a string or an array of content parts", *content);
  const auto& parts = content->as_array();
  if (parts.empty()) return checks::bad_value(param, "empty array. Expected an array with at least one content part.");
  bool only_text = true;
  for (size_t j = 0; j < parts.size(); ++j) {
    if (auto e = check_part(parts[j], out.role, param + "[" + std::to_string(j) + "]")) return e;
    if (parts[j].find("type")->as_string() != "text") only_text = false;
  }
  if (only_text) {
    std::string joined;
    for (const auto& p : parts) joined += p.find("text")->as_string();
    out.content = json::Value(std::move(joined));
  } else {
    out.content = *content;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> check_template_kwargs(const json::Value& kwargs, const std::string& param) {
  if (!kwargs.is_object()) return checks::wrong_type(param, "an object", kwargs);
  for (const auto& [name, value] : kwargs.as_object()) {
    (void)value;
    for (const char* own : {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"})
      if (name == own)
        return checks::bad_value(param + "." + name, "'" + name + "' is set by the request itself, not by "
                                                     "chat_template_kwargs.");
  }
  return std::nullopt;
}

namespace {

Check check_function_call(const json::Value& fc, const std::string& param) {
  if (!fc.is_object()) return checks::wrong_type(param, "an object", fc);
  if (auto e = require_string(fc, "name", param + ".name")) return e;
  return require_string(fc, "arguments", param + ".arguments");
}

Check parse_message(const json::Value& msg, const std::string& param, ChatMessage& out) {
  if (!msg.is_object()) return checks::wrong_type(param, "an object", msg);
  const json::Value* role = checks::present(msg, "role");
  if (!role) return checks::missing(param + ".role");
  if (!role->is_string()) return checks::wrong_type(param + ".role", "a string", *role);
  if (!is_known_role(role->as_string()))
    return checks::bad_value(param + ".role", "unknown role '" + role->as_string() +
                                                  "'; expected one of system, developer, user, assistant, tool, "
                                                  "function.");
  out.role = role->as_string();

  if (auto e = checks::read_string(msg, "name", param + ".name", out.name)) return e;
  if (out.role == "function" && !out.name) return checks::missing(param + ".name");

  const json::Value* tool_calls = checks::present(msg, "tool_calls");
  const json::Value* function_call = checks::present(msg, "function_call");
  if (tool_calls || function_call) {
    if (out.role != "assistant")
      return checks::bad_value(param + (tool_calls ? ".tool_calls" : ".function_call"),
                               "only assistant messages may carry tool calls.");
  }
  if (tool_calls) {
    if (auto e = check_tool_calls(*tool_calls, param + ".tool_calls")) return e;
    out.tool_calls = *tool_calls;
  }
  if (function_call) {
    if (auto e = check_function_call(*function_call, param + ".function_call")) return e;
    out.function_call = *function_call;
  }

  if (out.role == "tool") {
    if (auto e = require_string(msg, "tool_call_id", param + ".tool_call_id")) return e;
    out.tool_call_id = msg.find("tool_call_id")->as_string();
  }

  bool may_be_null = out.role == "function" || (out.role == "assistant" && (tool_calls || function_call));
  return read_content(msg, param + ".content", out, may_be_null);
}

}  // namespace

std::optional<ApiError> check_tool_calls(const json::Value& tool_calls, const std::string& param) {
  if (!tool_calls.is_array()) return checks::wrong_type(param, "an array", tool_calls);
  const auto& calls = tool_calls.as_array();
  if (calls.empty()) return checks::bad_value(param, "empty array. Expected at least one tool call.");
  for (size_t j = 0; j < calls.size(); ++j) {
    std::string p = param + "[" + std::to_string(j) + "]";
    const json::Value& call = calls[j];
    if (!call.is_object()) return checks::wrong_type(p, "an object", call);
    if (auto e = require_string(call, "id", p + ".id")) return e;
    if (auto e = require_string(call, "type", p + ".type")) return e;
    if (call.find("type")->as_string() != "function")
      return checks::bad_value(p + ".type", "expected 'function'.");
    const json::Value* fn = nullptr;
    if (auto e = require_object(call, "function", p + ".function", &fn)) return e;
    if (auto e = check_function_call(*fn, p + ".function")) return e;
  }
  return std::nullopt;
}

std::optional<ApiError> parse_messages(const json::Value& messages, std::vector<ChatMessage>& out) {
  if (!messages.is_array()) return checks::wrong_type("messages", "an array", messages);
  const auto& list = messages.as_array();
  if (list.empty()) return checks::bad_value("messages", "empty array. Expected an array with at least one message.");
  out.clear();
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    out.emplace_back();
    if (auto e = parse_message(list[i], "messages[" + std::to_string(i) + "]", out.back())) return e;
  }
  return std::nullopt;
}

}  // namespace reprox::api
