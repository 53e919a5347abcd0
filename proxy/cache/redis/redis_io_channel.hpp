// One asynchronous Redis connection driven by one io_context (an I/O
// thread): the Redis tier's lookups run on the thread that received the
// request, with no hand-off to a worker thread and back.
//
// Threading: every member except create() and close() runs on the context's
// thread, and every callback runs there. close() may run anywhere (see it).
//
// The channel only accepts a command while it is ready (connected, set up,
// the breaker closed, pending below the bound): a caller that is refused
// takes another path (the RedisExecutor) for that command, and the refusal
// starts a reconnect when one is due. Commands are pipelined: all the
// commands sent during one turn of the context go out in one write, and the
// replies come back in order.
//
// Bounds: at most `max_pending` commands in flight. A command whose deadline
// passes (checked at most `deadline_sweep` after it) fails the connection,
// and with it every pending command: a late reply cannot be matched to its
// command otherwise. Connect plus set-up is bounded by the connect timeout; after a
// failure the next connect waits `reconnect_min`, doubling to
// `reconnect_max`.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/cache/redis/redis_breaker.hpp"
#include "proxy/cache/redis/redis_connection.hpp"
#include "proxy/cache/redis/redis_value_reader.hpp"

namespace reprox {

struct RedisIoChannelOptions {
  RedisEndpoint endpoint;
  RedisTimeouts timeouts;
  std::vector<RedisArgv> setup;  // after AUTH/SELECT (e.g. RedisIoLookup's); any error reply fails the connect
  size_t max_pending = 1024;
  std::chrono::milliseconds deadline_sweep{5};  // slack after a deadline before the check
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{2000};
};

struct RedisIoResult {
  bool ok = false;
  std::string error;  // when !ok
  RedisValue reply;   // when ok (may be a Redis error reply)
};

// The arguments of one command, not copied: a braced list of strings or
// string_views, or a RedisArgv. Only valid during the call it is passed to.
class RespArgs {
 public:
  RespArgs(std::initializer_list<std::string_view> list) : list_(list) {}
  RespArgs(const RedisArgv& argv) : argv_(&argv) {}
  size_t size() const { return argv_ ? argv_->size() : list_.size(); }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    if (argv_) {
      for (const auto& a : *argv_) fn(std::string_view(a));
    } else {
      for (auto a : list_) fn(a);
    }
  }

 private:
  std::initializer_list<std::string_view> list_;
  const RedisArgv* argv_ = nullptr;
};

// Appends one command in RESP (an array of bulk strings) to `out`.
void append_resp_command(std::string& out, RespArgs args);

class RedisIoChannel : public std::enable_shared_from_this<RedisIoChannel> {
 public:
  using Clock = std::chrono::steady_clock;
  using Callback = std::function<void(RedisIoResult&)>;

  // Starts connecting at once. The breaker is shared with the store's
  // executor: the channel reports its connection failures and successes to
  // it and sends nothing while it is not closed.
  static std::shared_ptr<RedisIoChannel> create(boost::asio::io_context& io, RedisIoChannelOptions options,
                                                CircuitBreaker& breaker);
  ~RedisIoChannel();

  boost::asio::io_context& context() { return io_; }
  // True when send() would accept a command now; false may start a
  // reconnect (when one is due and the breaker allows it).
  bool try_ready();
  // Requires try_ready() just before, on the same turn. `done` runs exactly
  // once, on this thread, never inside send().
  void send(RespArgs command, Clock::time_point deadline, Callback done);
  // Closes the connection for good and fails pending commands with "closed".
  // On the context's thread, or on any thread while no thread runs the
  // context (the context stopped); otherwise posts the close.
  void close();

 private:
  enum class State { down, connecting, setting_up, ready, closed };
  struct Pending {
    Clock::time_point deadline;
    Callback done;  // empty for the set-up commands
  };
  RedisIoChannel(boost::asio::io_context& io, RedisIoChannelOptions options, CircuitBreaker& breaker);

  void start_connect();
  void on_connected(const boost::system::error_code& ec, uint64_t generation);
  void start_setup();
  void queue(RespArgs command, Clock::time_point deadline, Callback done);
  void flush();
  void read();
  void on_read(const boost::system::error_code& ec, size_t n, uint64_t generation);
  void deliver(RedisValue& reply);
  void arm_sweep();
  void fail_connection(const std::string& error);  // then reconnects after the backoff
  void close_now();
  // Closes the socket, stops the timers and fails every pending command.
  void end_connection(State next, const std::string& error);

  boost::asio::io_context& io_;
  const RedisIoChannelOptions options_;
  CircuitBreaker& breaker_;
  State state_ = State::down;
  uint64_t generation_ = 0;  // bumped per connection: handlers of an old one do nothing
  boost::asio::generic::stream_protocol::socket socket_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer connect_timer_;
  boost::asio::steady_timer sweep_timer_;
  bool sweep_armed_ = false;
  uint64_t sweep_token_ = 0;  // which arm a sweep handler belongs to
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_;
  std::unique_ptr<RedisValueReader> reader_;  // one per connection
  std::deque<Pending> pending_;  // sent or queued, in reply order
  size_t setup_left_ = 0;
  std::string out_;      // queued for the next write
  std::string writing_;  // the write in flight
  bool writing_now_ = false;
  bool flush_posted_ = false;
  std::vector<char> read_buf_;
};

}  // namespace reprox
