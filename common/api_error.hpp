// An OpenAI-style error: {"error":{"message","type","param","code"}} with an HTTP status.
#pragma once

#include <string>

namespace reprox::api {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null

  static ApiError invalid(std::string param, std::string message) {
    return ApiError{400, std::move(message), "invalid_request_error", std::move(param), ""};
  }
  // 404 for a model this server does not serve.
  static ApiError model_not_found(const std::string& model) {
    return ApiError{404, "The model '" + model + "' does not exist", "invalid_request_error", "model",
                    "model_not_found"};
  }
  std::string to_json() const;
};

}  // namespace reprox::api
