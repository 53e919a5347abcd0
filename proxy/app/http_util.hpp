// Small helpers for building answers.
#pragma once

#include <string>

#include "common/api_error.hpp"
#include "proxy/server/responder.hpp"

namespace reprox {

inline Response json_response(int status, std::string body) {
  Response res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

inline void respond_error(Responder& responder, const api::ApiError& error) {
  auto res = json_response(error.status, error.to_json());
  if (error.status == 429) res.set(http::field::retry_after, "1");
  responder.respond(std::move(res));
}

}  // namespace reprox
