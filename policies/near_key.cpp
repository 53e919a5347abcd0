#include "policies/near_key.hpp"

#include "policies/tenant.hpp"

namespace reprox::policy {
namespace {

// The text of a message whose content is a string or text parts only.
std::optional<std::string> text_only(const api::ChatMessage& m) {
  if (m.content.is_string()) return m.content.as_string();
  if (!m.content.is_array()) return std::nullopt;
  for (const json::Value& part : m.content.as_array()) {
    const json::Value* type = part.find("type");
    if (!type || !type->is_string() || type->as_string() != "text") return std::nullopt;
  }
  return m.text();
}

}  // namespace

std::optional<NearQuery> near_query(const api::ChatRequest& request, const KeyContext& context) {
  if (request.messages.empty() || request.messages.back().role != "user") return std::nullopt;
  std::optional<std::string> text = text_only(request.messages.back());
  if (!text) return std::nullopt;
  api::ChatRequest blanked = request;
  blanked.messages.back().content = json::Value(std::string());
  // The canonical form of the rest, under its own prefix: a context key is
  // a different hash from any exact key.
  NearQuery q;
  q.context_key = sha256_hex("near-context:" + make_key(blanked, context).canonical);
  q.text = std::move(*text);
  return q;
}

}  // namespace reprox::policy
