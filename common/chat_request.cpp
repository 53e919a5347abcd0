#include "common/chat_request.hpp"

namespace reprox::api {

std::string ChatMessage::text() const {
  if (content.is_string()) return content.as_string();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& part : content.as_array()) {
    const json::Value* type = part.find("type");
    if (!type || !type->is_string() || (type->as_string() != "text" && type->as_string() != "refusal")) continue;
    const json::Value* text = part.find(type->as_string());  // {"type": "text", "text": ...}, or "refusal"
    if (text && text->is_string()) out += text->as_string();
  }
  return out;
}

}  // namespace reprox::api
