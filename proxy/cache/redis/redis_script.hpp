// A Lua script for the Redis tier, called by its SHA-1 (EVALSHA) so that a
// lookup sends a few dozen bytes and Redis skips hashing the body.
// RedisConnection falls back to EVAL (which also caches the script in
// Redis) when Redis answers NOSCRIPT: after a restart, a failover or a
// SCRIPT FLUSH.
#pragma once

#include <string>

namespace reprox {

struct RedisScript {
  std::string body;
  std::string sha;  // lowercase hex SHA-1 of body, as Redis names scripts
};

RedisScript make_redis_script(std::string body);

}  // namespace reprox
