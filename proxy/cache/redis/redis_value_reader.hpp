// A RESP reply reader (hiredis's parser) that builds RedisValues directly,
// through hiredis's reply-object callbacks, instead of redisReply objects
// that are then copied: an MGET of two keys cost 8 allocations and a copy of
// the entry's bytes that way, 3 allocations and no copy this way.
//
// Threading: one reader per connection, used by one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "proxy/cache/redis/redis_connection.hpp"

struct redisReader;

namespace reprox {

class RedisValueReader {
 public:
  RedisValueReader();  // throws std::bad_alloc when hiredis cannot allocate its reader
  ~RedisValueReader();
  RedisValueReader(const RedisValueReader&) = delete;
  RedisValueReader& operator=(const RedisValueReader&) = delete;

  // Appends bytes read from the connection; false (with error()) on failure.
  bool feed(const char* data, size_t n);
  enum class Next { value, incomplete, error };
  // The next whole reply: `value` (moved into `out`), `incomplete` (feed
  // more), or `error` (a protocol error; the reader is unusable then).
  Next next(RedisValue& out);
  std::string error() const;

 private:
  redisReader* reader_ = nullptr;
};

}  // namespace reprox
