#include "proxy/cache/redis/redis_script.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace reprox {

RedisScript make_redis_script(std::string body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(body.data(), body.size(), digest, &len, EVP_sha1(), nullptr) != 1 || len != 20)
    throw std::runtime_error("redis script: SHA-1 failed");
  static const char* hex = "0123456789abcdef";
  RedisScript s;
  s.sha.reserve(40);
  for (unsigned i = 0; i < len; ++i) {
    s.sha.push_back(hex[digest[i] >> 4]);
    s.sha.push_back(hex[digest[i] & 15]);
  }
  s.body = std::move(body);
  return s;
}

}  // namespace reprox
