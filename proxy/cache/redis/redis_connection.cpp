#include "proxy/cache/redis/redis_connection.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

namespace reprox {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = long(ms.count() / 1000);
  tv.tv_usec = long((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

RedisValue copy_redis_reply(const redisReply* r) {
  RedisValue v;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::Type::integer;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      v.type = RedisValue::Type::string;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = RedisValue::Type::status;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = RedisValue::Type::error;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::Type::array;
      v.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) v.elements.push_back(copy_redis_reply(r->element[i]));
      break;
    default:
      break;  // nil
  }
  return v;
}

std::vector<RedisArgv> auth_and_select(const RedisEndpoint& ep) {
  std::vector<RedisArgv> setup;
  if (!ep.password.empty()) {
    if (ep.username.empty())
      setup.push_back({"AUTH", ep.password});
    else
      setup.push_back({"AUTH", ep.username, ep.password});
  }
  if (ep.db != 0) setup.push_back({"SELECT", std::to_string(ep.db)});
  return setup;
}

RedisConnection::RedisConnection(RedisEndpoint endpoint, RedisTimeouts timeouts,
                                 std::shared_ptr<const std::vector<RedisScript>> scripts)
    : endpoint_(std::move(endpoint)), timeouts_(timeouts), scripts_(std::move(scripts)) {}

RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
}

bool RedisConnection::connect(std::string& error) {
  close();
  timeval ct = to_timeval(timeouts_.connect);
  ctx_ = endpoint_.is_unix ? redisConnectUnixWithTimeout(endpoint_.path.c_str(), ct)
                           : redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, ct);
  if (!ctx_) {
    error = "cannot allocate a redis context";
    return false;
  }
  if (ctx_->err) {
    error = std::string("connect: ") + ctx_->errstr;
    close();
    return false;
  }
  if (redisSetTimeout(ctx_, to_timeval(timeouts_.command)) != REDIS_OK) {
    error = "cannot set the command timeout";
    close();
    return false;
  }
  std::vector<RedisArgv> setup = auth_and_select(endpoint_);
  // Load the scripts up front, so that the EVALSHAs of a pipelined batch do
  // not miss (and fall back, out of order) on a fresh server.
  if (scripts_)
    for (const auto& script : *scripts_) setup.push_back({"SCRIPT", "LOAD", script.body});
  if (setup.empty()) return true;
  std::vector<RedisValue> replies;
  if (!run(setup, replies, error)) return false;
  for (const auto& r : replies) {
    if (r.is_error()) {
      error = "connection setup (AUTH/SELECT/SCRIPT LOAD): " + r.str;
      close();
      return false;
    }
  }
  return true;
}

const RedisScript* RedisConnection::script_for(const RedisArgv& command) const {
  if (!scripts_ || command.size() < 2 || command[0] != "EVALSHA") return nullptr;
  for (const auto& s : *scripts_)
    if (s.sha == command[1]) return &s;
  return nullptr;
}

bool RedisConnection::run(const std::vector<RedisArgv>& commands, std::vector<RedisValue>& replies,
                          std::string& error) {
  if (!pipeline(commands, replies, error)) return false;
  // NOSCRIPT (Redis restarted, failed over or flushed its scripts): re-send
  // those commands as EVAL, which also caches the script again.
  std::vector<size_t> retry;
  std::vector<RedisArgv> evals;
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!replies[i].is_error() || replies[i].str.rfind("NOSCRIPT", 0) != 0) continue;
    const RedisScript* script = script_for(commands[i]);
    if (!script) continue;
    RedisArgv eval = commands[i];
    eval[0] = "EVAL";
    eval[1] = script->body;
    evals.push_back(std::move(eval));
    retry.push_back(i);
  }
  if (retry.empty()) return true;
  std::vector<RedisValue> again;
  if (!pipeline(evals, again, error)) return false;
  for (size_t j = 0; j < retry.size(); ++j) replies[retry[j]] = std::move(again[j]);
  return true;
}

bool RedisConnection::pipeline(const std::vector<RedisArgv>& commands, std::vector<RedisValue>& replies,
                               std::string& error) {
  replies.clear();
  if (!ctx_) {
    error = "not connected";
    return false;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& cmd : commands) {
    argv.clear();
    lens.clear();
    for (const auto& a : cmd) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, int(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      error = std::string("append: ") + ctx_->errstr;
      close();
      return false;
    }
  }
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
      error = ctx_->errstr[0] ? std::string(ctx_->errstr) : std::string("no reply");
      if (raw) freeReplyObject(raw);
      close();
      return false;
    }
    replies.push_back(copy_redis_reply(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  return true;
}

}  // namespace reprox
