#include "common/api_error.hpp"

#include "common/json.hpp"

namespace reprox::api {

std::string ApiError::to_json() const {
  std::string out = "{\"error\":{\"message\":";
  json::write_string(out, message);
  out += ",\"type\":";
  json::write_string(out, type);
  out += ",\"param\":";
  if (param.empty()) out += "null"; else json::write_string(out, param);
  out += ",\"code\":";
  if (code.empty()) out += "null"; else json::write_string(out, code);
  out += "}}";
  return out;
}

}  // namespace reprox::api
