#include "policies/tenant.hpp"

#include <openssl/evp.h>

namespace reprox::policy {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

constexpr std::string_view kBearer = "bearer";

// True when s begins with "bearer" (any case) followed by the end or a space.
bool has_bearer_scheme(std::string_view s) {
  if (s.size() < kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kBearer[i]) return false;
  }
  return s.size() == kBearer.size() || is_space(s[kBearer.size()]);
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

std::string tenant_of(std::string_view authorization_header) {
  std::string_view value = trim(authorization_header);
  if (has_bearer_scheme(value)) value = trim(value.substr(kBearer.size()));
  if (value.empty()) return "";
  return sha256_hex(value);
}

}  // namespace reprox::policy
