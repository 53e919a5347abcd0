// The language a request asks the embedded engine's answer to stay in:
// response_format json_object (JSON mode) or json_schema (its schema),
// vLLM's guided_json (a schema, as an object or its JSON text) or
// guided_choice (one of its strings), or none.
#pragma once

#include <optional>

#include "common/api_error.hpp"
#include "common/chat_request.hpp"
#include "engine/sampling/token_guide.hpp"

namespace reprox {

// Fills *out; a 400 naming the field when the schema cannot be followed
// (a keyword the engine lacks, not an object at its root, ...) or when two
// of these options are set.
std::optional<api::ApiError> guide_spec(const api::ChatRequest& chat, engine::GuideSpec* out);

}  // namespace reprox
