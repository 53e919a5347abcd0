#include "proxy/backend/guide_spec.hpp"

#include <string>

namespace reprox {

namespace {

std::optional<api::ApiError> compile_schema(const json::Value& schema, const char* param, engine::GuideSpec* out) {
  std::string error;
  out->kind = engine::GuideSpec::Kind::kJsonSchema;
  out->schema = schema.is_string() ? engine::JsonSchema::compile_text(schema.as_string(), &error)
                                   : engine::JsonSchema::compile(schema, &error);
  if (!out->schema)
    return api::ApiError::invalid(param, "the embedded engine cannot follow this JSON schema: " + error +
                                             "; simplify the schema or use --upstream");
  return std::nullopt;
}

}  // namespace

std::optional<api::ApiError> guide_spec(const api::ChatRequest& chat, engine::GuideSpec* out) {
  *out = engine::GuideSpec{};
  const json::Value* guided_json = chat.raw.find("guided_json");
  if (guided_json && guided_json->is_null()) guided_json = nullptr;
  const json::Value* type = chat.response_format.find("type");
  const std::string format = type && type->is_string() ? type->as_string() : "text";
  if (guided_json && (format != "text" || !chat.guided_choice.empty()))
    return api::ApiError::invalid("guided_json", "cannot be combined with guided_choice or a response_format of type '" +
                                                     format + "'.");
  if (!chat.guided_choice.empty()) {
    out->kind = engine::GuideSpec::Kind::kChoice;
    out->choices = chat.guided_choice;
    return std::nullopt;
  }
  if (guided_json) {
    if (!guided_json->is_object() && !guided_json->is_string())
      return api::ApiError::invalid("guided_json", "expected a JSON schema (an object or its JSON text).");
    return compile_schema(*guided_json, "guided_json", out);
  }
  if (format == "json_object") {
    out->kind = engine::GuideSpec::Kind::kJsonObject;
  } else if (format == "json_schema") {
    const json::Value* spec = chat.response_format.find("json_schema");
    const json::Value* schema = spec ? spec->find("schema") : nullptr;
    if (!schema || schema->is_null()) out->kind = engine::GuideSpec::Kind::kJsonObject;  // no schema: any object
    else return compile_schema(*schema, "response_format", out);
  }
  return std::nullopt;
}

}  // namespace reprox
