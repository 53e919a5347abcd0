// One blocking hiredis connection, owned by one Redis worker thread.
//
// Every socket operation is bounded: connect by the connect timeout, each
// send/receive by the command timeout (SO_SNDTIMEO/SO_RCVTIMEO). A context
// that saw any error is freed at once and never reused; the next batch
// connects afresh. Not thread-safe: one thread uses it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "proxy/cache/redis_url.hpp"

struct redisContext;
struct redisReply;

namespace reprox {

// An owned copy of a reply, so that no hiredis object outlives its batch.
struct RedisValue {
  enum class Type { nil, integer, string, status, error, array };
  Type type = Type::nil;
  long long integer = 0;
  std::string str;  // string, status and error
  std::vector<RedisValue> elements;

  bool is_nil() const { return type == Type::nil; }
  bool is_error() const { return type == Type::error; }
};

using RedisArgv = std::vector<std::string>;

struct RedisTimeouts {
  std::chrono::milliseconds connect{100};
  std::chrono::milliseconds command{50};
};

class RedisConnection {
 public:
  RedisConnection(RedisEndpoint endpoint, RedisTimeouts timeouts);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  bool connected() const { return ctx_ != nullptr; }
  // Connects, then AUTH and SELECT as the endpoint says. On failure returns
  // false with `error` set and leaves the connection closed.
  bool connect(std::string& error);
  // Pipelines the commands and reads every reply. Returns false on an I/O
  // or protocol error (the connection is then closed); Redis error replies
  // are values, not failures.
  bool run(const std::vector<RedisArgv>& commands, std::vector<RedisValue>& replies, std::string& error);
  void close();

 private:
  const RedisEndpoint endpoint_;
  const RedisTimeouts timeouts_;
  redisContext* ctx_ = nullptr;
};

}  // namespace reprox
