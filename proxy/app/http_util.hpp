// Small helpers for building answers.
#pragma once

#include <string>
#include <string_view>

#include "common/api_error.hpp"
#include "proxy/server/responder.hpp"

namespace reprox {

// Equal in time that depends on the lengths only, not on where the bytes
// differ: comparing a presented secret does not leak its prefix.
inline bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

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
