#include "proxy/backend/upstream_request_body.hpp"

#include "common/json.hpp"

namespace reprox::backend {
namespace {

json::Value message_to_json(const api::ChatMessage& m) {
  json::Value out = json::Object{};
  out.set("role", m.role);
  out.set("content", m.content);
  if (m.name) out.set("name", *m.name);
  if (!m.tool_calls.is_null()) out.set("tool_calls", m.tool_calls);
  if (m.tool_call_id) out.set("tool_call_id", *m.tool_call_id);
  return out;
}

json::Value body_from_fields(const api::ChatRequest& chat) {
  json::Value body = json::Object{};
  json::Array messages;
  for (const auto& m : chat.messages) messages.push_back(message_to_json(m));
  body.set("messages", json::Value(std::move(messages)));
  body.set("temperature", chat.temperature);
  body.set("top_p", chat.top_p);
  if (chat.top_k > 0) body.set("top_k", chat.top_k);
  body.set("n", chat.n);
  if (chat.max_tokens) body.set("max_tokens", *chat.max_tokens);
  if (!chat.stop.empty()) {
    json::Array stop(chat.stop.begin(), chat.stop.end());
    body.set("stop", json::Value(std::move(stop)));
  }
  if (chat.presence_penalty != 0.0) body.set("presence_penalty", chat.presence_penalty);
  if (chat.frequency_penalty != 0.0) body.set("frequency_penalty", chat.frequency_penalty);
  if (!chat.logit_bias.empty()) {
    json::Value bias = json::Object{};
    for (const auto& [token, weight] : chat.logit_bias) bias.set(std::to_string(token), weight);
    body.set("logit_bias", bias);
  }
  if (chat.logprobs) {
    body.set("logprobs", true);
    if (chat.top_logprobs > 0) body.set("top_logprobs", chat.top_logprobs);
  }
  if (!chat.tools.is_null()) body.set("tools", chat.tools);
  if (!chat.tool_choice.is_null()) body.set("tool_choice", chat.tool_choice);
  if (!chat.response_format.is_null()) body.set("response_format", chat.response_format);
  if (!chat.user.empty()) body.set("user", chat.user);
  return body;
}

}  // namespace

std::string build_upstream_chat_body(const BackendRequest& request) {
  json::Value body = request.chat.raw.is_object() ? request.chat.raw : body_from_fields(request.chat);
  auto& members = body.mutable_object();
  for (auto it = members.begin(); it != members.end();) {
    if (it->first == "cache") it = members.erase(it); else ++it;
  }
  body.set("model", request.model_id);
  body.set("seed", request.seed);
  body.set("stream", true);
  json::Value stream_options = json::Object{};
  stream_options.set("include_usage", true);
  body.set("stream_options", stream_options);
  return json::dump(body);
}

}  // namespace reprox::backend
