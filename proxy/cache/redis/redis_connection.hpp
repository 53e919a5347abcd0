// One blocking hiredis connection, owned by one Redis worker thread.
//
// Every socket operation is bounded: connect by the connect timeout, each
// send/receive by the command timeout (SO_SNDTIMEO/SO_RCVTIMEO). A context
// that saw any error is freed at once and never reused; the next batch
// connects afresh. Not thread-safe: one thread uses it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "proxy/cache/redis/redis_script.hpp"
#include "proxy/cache/redis/redis_url.hpp"

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

// Copies a hiredis reply (and its elements) into a RedisValue.
RedisValue copy_redis_reply(const redisReply* reply);

using RedisArgv = std::vector<std::string>;

// The commands a fresh connection sends first: AUTH when the endpoint has a
// password, SELECT when its database is not 0.
std::vector<RedisArgv> auth_and_select(const RedisEndpoint& endpoint);

struct RedisTimeouts {
  std::chrono::milliseconds connect{100};
  std::chrono::milliseconds command{50};
};

class RedisConnection {
 public:
  // `scripts`: the bodies behind the EVALSHA commands this connection runs
  // (may be null); a NOSCRIPT answer re-runs the command as EVAL.
  RedisConnection(RedisEndpoint endpoint, RedisTimeouts timeouts,
                  std::shared_ptr<const std::vector<RedisScript>> scripts = nullptr);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  bool connected() const { return ctx_ != nullptr; }
  // Connects, then AUTH and SELECT as the endpoint says, and SCRIPT LOAD. On failure returns
  // false with `error` set and leaves the connection closed.
  bool connect(std::string& error);
  // Pipelines the commands and reads every reply. Returns false on an I/O
  // or protocol error (the connection is then closed); Redis error replies
  // are values, not failures. connect() loads the scripts (SCRIPT LOAD); an
  // EVALSHA that still finds none (SCRIPT FLUSH on a live connection) is
  // re-sent as EVAL in a second round trip, after the batch's other
  // commands (the one case where a batch's order is not kept).
  bool run(const std::vector<RedisArgv>& commands, std::vector<RedisValue>& replies, std::string& error);
  void close();

 private:
  bool pipeline(const std::vector<RedisArgv>& commands, std::vector<RedisValue>& replies, std::string& error);
  const RedisScript* script_for(const RedisArgv& command) const;

  const RedisEndpoint endpoint_;
  const RedisTimeouts timeouts_;
  const std::shared_ptr<const std::vector<RedisScript>> scripts_;
  redisContext* ctx_ = nullptr;
};

}  // namespace reprox
