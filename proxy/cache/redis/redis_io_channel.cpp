#include "proxy/cache/redis/redis_io_channel.hpp"

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <charconv>

namespace reprox {

namespace net = boost::asio;
using boost::system::error_code;

namespace {

void append_number(std::string& out, size_t n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, end);
}

}  // namespace

void append_resp_command(std::string& out, RespArgs args) {
  out += '*';
  append_number(out, args.size());
  out += "\r\n";
  args.for_each([&out](std::string_view a) {
    out += '$';
    append_number(out, a.size());
    out += "\r\n";
    out += a;
    out += "\r\n";
  });
}

std::shared_ptr<RedisIoChannel> RedisIoChannel::create(net::io_context& io, RedisIoChannelOptions options,
                                                       CircuitBreaker& breaker) {
  std::shared_ptr<RedisIoChannel> channel(new RedisIoChannel(io, std::move(options), breaker));
  net::post(io, [channel] {
    if (channel->state_ == State::down && channel->breaker_.allow()) channel->start_connect();
  });
  return channel;
}

RedisIoChannel::RedisIoChannel(net::io_context& io, RedisIoChannelOptions options, CircuitBreaker& breaker)
    : io_(io),
      options_(std::move(options)),
      breaker_(breaker),
      socket_(io),
      resolver_(io),
      connect_timer_(io),
      sweep_timer_(io),
      backoff_(options_.reconnect_min),
      read_buf_(64 * 1024) {}

RedisIoChannel::~RedisIoChannel() = default;

bool RedisIoChannel::try_ready() {
  if (state_ == State::ready) return pending_.size() < options_.max_pending && breaker_.allow();
  if (state_ == State::down && Clock::now() >= retry_at_ && breaker_.allow()) start_connect();
  return false;
}

void RedisIoChannel::send(RespArgs command, Clock::time_point deadline, Callback done) {
  queue(command, deadline, std::move(done));
}

void RedisIoChannel::start_connect() {
  state_ = State::connecting;
  uint64_t gen = ++generation_;
  auto self = shared_from_this();
  connect_timer_.expires_after(options_.timeouts.connect);
  connect_timer_.async_wait([self, gen](const error_code& ec) {
    if (ec || gen != self->generation_) return;
    if (self->state_ == State::connecting || self->state_ == State::setting_up)
      self->fail_connection("connect timeout");
  });
  const RedisEndpoint& ep = options_.endpoint;
  if (ep.is_unix) {
    socket_.async_connect(net::local::stream_protocol::endpoint(ep.path),
                          [self, gen](const error_code& ec) { self->on_connected(ec, gen); });
    return;
  }
  resolver_.async_resolve(
      ep.host, std::to_string(ep.port),
      [self, gen](const error_code& ec, const net::ip::tcp::resolver::results_type& results) {
        if (gen != self->generation_) return;
        if (ec || results.empty()) return self->fail_connection("resolve: " + (ec ? ec.message() : "no address"));
        self->socket_.async_connect(results.begin()->endpoint(),
                                    [self, gen](const error_code& ec) { self->on_connected(ec, gen); });
      });
}

void RedisIoChannel::on_connected(const error_code& ec, uint64_t generation) {
  if (generation != generation_) return;
  if (ec) return fail_connection("connect: " + ec.message());
  if (!options_.endpoint.is_unix) {
    error_code ignored;
    socket_.set_option(net::ip::tcp::no_delay(true), ignored);
  }
  try {
    reader_ = std::make_unique<RedisValueReader>();
  } catch (const std::bad_alloc&) {
    return fail_connection("cannot allocate a reply reader");
  }
  state_ = State::setting_up;
  read();
  start_setup();
}

void RedisIoChannel::start_setup() {
  std::vector<RedisArgv> setup = auth_and_select(options_.endpoint);
  setup.insert(setup.end(), options_.setup.begin(), options_.setup.end());
  // PING last: the connection is ready once its reply is in, even with no
  // other set-up.
  setup.push_back({"PING"});
  setup_left_ = setup.size();
  auto deadline = Clock::now() + options_.timeouts.connect;
  for (const auto& command : setup) queue(command, deadline, nullptr);
}

void RedisIoChannel::queue(RespArgs command, Clock::time_point deadline, Callback done) {
  append_resp_command(out_, command);
  pending_.push_back(Pending{deadline, std::move(done)});
  arm_sweep();
  if (writing_now_ || flush_posted_) return;
  // Commands sent during the rest of this turn join the same write.
  flush_posted_ = true;
  net::post(io_, [self = shared_from_this()] {
    self->flush_posted_ = false;
    self->flush();
  });
}

void RedisIoChannel::flush() {
  if (writing_now_ || out_.empty() || (state_ != State::ready && state_ != State::setting_up)) return;
  writing_now_ = true;
  std::swap(out_, writing_);
  net::async_write(socket_, net::buffer(writing_),
                   [self = shared_from_this(), gen = generation_](const error_code& ec, size_t) {
                     self->writing_now_ = false;
                     self->writing_.clear();
                     if (gen == self->generation_ && ec) return self->fail_connection("write: " + ec.message());
                     self->flush();  // what was queued meanwhile (also for a newer connection)
                   });
}

void RedisIoChannel::read() {
  socket_.async_read_some(net::buffer(read_buf_),
                          [self = shared_from_this(), gen = generation_](const error_code& ec, size_t n) {
                            self->on_read(ec, n, gen);
                          });
}

void RedisIoChannel::on_read(const error_code& ec, size_t n, uint64_t generation) {
  if (generation != generation_) return;
  if (ec) return fail_connection(ec == net::error::eof ? "connection closed by redis" : "read: " + ec.message());
  if (!reader_->feed(read_buf_.data(), n)) return fail_connection("protocol: " + reader_->error());
  bool any = false;
  for (;;) {
    RedisValue value;
    auto next = reader_->next(value);
    if (next == RedisValueReader::Next::error) return fail_connection("protocol: " + reader_->error());
    if (next == RedisValueReader::Next::incomplete) break;
    if (pending_.empty()) return fail_connection("a reply with no command");
    any = true;
    deliver(value);
    if (generation != generation_) return;  // a set-up reply failed the connection
  }
  if (any && state_ == State::ready) breaker_.on_success();
  read();
}

void RedisIoChannel::deliver(RedisValue& reply) {
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  if (p.done) {
    RedisIoResult result{true, {}, std::move(reply)};
    return p.done(result);
  }
  // A set-up command.
  if (reply.is_error()) return fail_connection("connection set-up (AUTH, SELECT, epoch:seq): " + reply.str);
  if (--setup_left_ == 0 && state_ == State::setting_up) {
    state_ = State::ready;
    connect_timer_.cancel();
    backoff_ = options_.reconnect_min;
  }
}

void RedisIoChannel::arm_sweep() {
  if (sweep_armed_ || pending_.empty()) return;
  // Wakes at the earliest pending deadline (not every `deadline_sweep`):
  // under load the timer is re-armed a few times per deadline period, not
  // whenever the queue drains and fills again (each arm that moves the
  // earliest timer is a timerfd_settime system call).
  auto earliest = pending_.front().deadline;
  for (const auto& p : pending_) earliest = std::min(earliest, p.deadline);
  sweep_armed_ = true;
  sweep_timer_.expires_at(earliest + options_.deadline_sweep);
  sweep_timer_.async_wait([self = shared_from_this(), token = ++sweep_token_](const error_code& ec) {
    if (token != self->sweep_token_) return;  // cancelled and re-armed meanwhile
    self->sweep_armed_ = false;
    if (ec || self->state_ == State::closed || self->pending_.empty()) return;
    auto now = Clock::now();
    for (const auto& p : self->pending_)
      if (p.deadline <= now) return self->fail_connection("timeout");
    self->arm_sweep();
  });
}

void RedisIoChannel::fail_connection(const std::string& error) {
  if (state_ == State::down || state_ == State::closed) return;
  // A failed connect of a channel only counts when the store would see it
  // too: the executor's own connects and probes drive the breaker then.
  if (state_ == State::ready) breaker_.on_failure();
  retry_at_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, options_.reconnect_max);
  end_connection(State::down, error);
}

void RedisIoChannel::close() {
  if (io_.get_executor().running_in_this_thread() || io_.stopped()) return close_now();
  net::post(io_, [self = shared_from_this()] { self->close_now(); });
}

void RedisIoChannel::close_now() {
  if (state_ != State::closed) end_connection(State::closed, "closed");
}

void RedisIoChannel::end_connection(State next, const std::string& error) {
  state_ = next;
  ++generation_;
  error_code ignored;
  socket_.close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  sweep_timer_.cancel();
  sweep_armed_ = false;
  out_.clear();
  setup_left_ = 0;
  std::deque<Pending> failed;
  failed.swap(pending_);
  for (auto& p : failed) {
    if (!p.done) continue;
    RedisIoResult result{false, error, {}};
    p.done(result);
  }
}

}  // namespace reprox
