// Tenant identity for cache isolation: the hex SHA-256 of the bearer token.
#pragma once

#include <string>
#include <string_view>

namespace reprox::policy {

// Lowercase hex SHA-256 (64 characters) of the bytes of `data`.
std::string sha256_hex(std::string_view data);

// "Bearer X" (scheme case-insensitive, surrounding spaces ignored) -> sha256_hex(X).
// A value without the Bearer scheme is hashed whole, so different credentials
// never share a tenant. "" when there is no token at all.
std::string tenant_of(std::string_view authorization_header);

}  // namespace reprox::policy
