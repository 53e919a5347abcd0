#include "proxy/server/http_session.hpp"

#include <charconv>
#include <cstring>
#include <utility>

#include "common/api_error.hpp"
#include "proxy/server/connection_tracker.hpp"

namespace reprox {

void serialize_head(const http::response_header<>& response, std::string& out) {
  // Sized first, then filled with memcpy: appending piece by piece cost
  // more than half of this (about 35 appends per cache-hit answer).
  char status[16];
  auto [status_end, ec] = std::to_chars(status, status + sizeof status, response.result_int());
  (void)ec;  // an unsigned status always fits in 16 chars
  auto reason = response.reason();
  if (reason.empty()) reason = http::obsolete_reason(response.result());
  const std::string_view version = response.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  size_t size = version.size() + size_t(status_end - status) + 1 + reason.size() + 2 + 2;
  for (const auto& field : response) size += field.name_string().size() + 2 + field.value().size() + 2;
  out.resize(size);
  char* p = out.data();
  auto put = [&p](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  put(version);
  put(std::string_view(status, size_t(status_end - status)));
  put(" ");
  put(std::string_view(reason.data(), reason.size()));
  put("\r\n");
  for (const auto& field : response) {
    auto name = field.name_string();
    auto value = field.value();
    put(std::string_view(name.data(), name.size()));
    put(": ");
    put(std::string_view(value.data(), value.size()));
    put("\r\n");
  }
  put("\r\n");
}

void serialize_rendered_head(const RenderedAnswer& a, bool keep_alive, std::string& out) {
  char status[16], length[24];
  auto status_end = std::to_chars(status, status + sizeof status, a.status).ptr;
  auto length_end = std::to_chars(length, length + sizeof length, a.body.size()).ptr;
  auto reason = http::obsolete_reason(http::int_to_status(a.status));
  constexpr std::string_view kLength = "Content-Length: ", kClose = "Connection: close\r\n";
  const size_t size = 9 + size_t(status_end - status) + 1 + reason.size() + 2 + a.fields.size() +
                      (keep_alive ? 0 : kClose.size()) + kLength.size() + size_t(length_end - length) + 2 + 2;
  out.resize(size);
  char* p = out.data();
  auto put = [&p](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  put("HTTP/1.1 ");
  put(std::string_view(status, size_t(status_end - status)));
  put(" ");
  put(std::string_view(reason.data(), reason.size()));
  put("\r\n");
  put(a.fields);
  if (!keep_alive) put(kClose);  // where Beast's keep_alive(false) puts it: before Content-Length
  put(kLength);
  put(std::string_view(length, size_t(length_end - length)));
  put("\r\n\r\n");
}

HttpSession::HttpSession(ConnectionSocket&& socket, RequestHandler& handler, const ServerOptions& options,
                         std::shared_ptr<ConnectionTracker> tracker)
    : stream_(std::move(socket)), handler_(handler), options_(options), tracker_(std::move(tracker)),
      read_deadline_(stream_.get_executor()) {}

HttpSession::~HttpSession() {
  if (tracker_id_) tracker_->remove(tracker_id_);
}

void HttpSession::run() {
  // The socket's executor is the connection's strand (see ConnectionStrand): start on it.
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
}

void HttpSession::drain() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->keep_alive_ = false;
    if (!self->in_request_ && !self->closed_ && !(self->parser_ && self->parser_->got_some())) self->close_now();
  });
}

void HttpSession::abort() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close_now(); });
}

void HttpSession::do_read() {
  if (closed_) return;
  if (tracker_->draining()) return close_gracefully();
  in_request_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(options_.header_limit));
  parser_->body_limit(options_.body_limit);
  stream_expires_never();
  arm_read_deadline();
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void HttpSession::on_header(beast::error_code ec) {
  if (ec) return on_read(ec);
  const auto& req = parser_->get();
  // Request smuggling guards (RFC 7230 3.3.3): never accept both framings,
  // nor more than one Content-Length.
  auto cl = req.count(http::field::content_length);
  if (cl > 1) return reject(http::status::bad_request, "duplicate Content-Length header", "invalid_request_error");
  if (cl == 1 && req.count(http::field::transfer_encoding) > 0)
    return reject(http::status::bad_request, "both Content-Length and Transfer-Encoding are set",
                  "invalid_request_error");
  auto expect = req[http::field::expect];
  if (!expect.empty()) {
    if (!beast::iequals(expect, "100-continue"))
      return reject(http::status::expectation_failed, "unsupported Expect header", "invalid_request_error");
    // Tell clients such as curl to send the body now instead of after 1 s.
    auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
    stream_expires_after(options_.write_timeout);
    net::async_write(stream_, net::buffer(*cont), [self = shared_from_this(), cont](beast::error_code wec, size_t) {
      if (wec) return self->close_now();
      self->read_body();
    });
    return;
  }
  read_body();
}

void HttpSession::read_body() {
  stream_expires_never();  // the read deadline armed in do_read still runs
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
}

// The read deadline is a timer of its own, not the stream's expiry: Beast's
// expiry closes the socket, which would leave no way to send the 408. On
// expiry the timer only cancels the pending read.
//
// The timer is lazy: a request's read only moves read_deadline_at_, and the
// timer, armed at most once per read_timeout, re-arms itself for the later
// deadline when it finds one (or stops when no read is running). Arming and
// cancelling a timer per request cost more than the rest of the head's
// handling on the cache-hit path.
void HttpSession::arm_read_deadline() {
  read_timed_out_ = false;
  reading_ = true;
  read_deadline_at_ = std::chrono::steady_clock::now() + options_.read_timeout;
  if (!read_timer_pending_ || read_timer_at_ > read_deadline_at_) start_read_timer(read_deadline_at_);
}

void HttpSession::start_read_timer(std::chrono::steady_clock::time_point at) {
  const uint64_t seq = ++read_deadline_seq_;  // a wait this replaces completes stale
  read_timer_pending_ = true;
  read_timer_at_ = at;
  read_deadline_.expires_at(at);
  read_deadline_.async_wait([self = shared_from_this(), seq](beast::error_code ec) {
    if (seq != self->read_deadline_seq_) return;
    self->read_timer_pending_ = false;
    if (ec || self->closed_ || !self->reading_) return;
    if (std::chrono::steady_clock::now() < self->read_deadline_at_)
      return self->start_read_timer(self->read_deadline_at_);
    self->read_timed_out_ = true;
    beast::error_code ignored;
    self->stream_.socket().cancel(ignored);
  });
}

void HttpSession::stop_read_deadline() { reading_ = false; }

void HttpSession::stream_expires_after(std::chrono::steady_clock::duration d) {
  stream_expiry_set_ = true;
  stream_.expires_after(d);
}

void HttpSession::stream_expires_never() {
  if (!stream_expiry_set_) return;  // nothing to cancel: skips a timer-queue walk per read
  stream_expiry_set_ = false;
  stream_.expires_never();
}

void HttpSession::on_read(beast::error_code ec) {
  stop_read_deadline();
  if (ec && read_timed_out_) {
    if (parser_ && parser_->got_some())
      return reject(http::status::request_timeout, "the request was not received in time", "invalid_request_error");
    return close_now();
  }
  if (ec == http::error::end_of_stream) return close_gracefully();
  if (ec == http::error::header_limit)
    return reject(http::status::request_header_fields_too_large, "request headers are too large",
                  "invalid_request_error");
  if (ec == http::error::body_limit)
    return reject(http::status::payload_too_large, "request body is too large", "invalid_request_error");
  if (ec.category() == http::make_error_code(http::error::bad_target).category())
    return reject(http::status::bad_request, std::string("malformed HTTP request: ") + ec.message(),
                  "invalid_request_error");
  if (ec) return close_now();

  in_request_ = true;
  ++answer_seq_;
  keep_alive_ = parser_->get().keep_alive() && !tracker_->draining();
  head_only_ = parser_->get().method() == http::verb::head;
  stream_expires_never();
  handler_.handle(parser_->release(), shared_from_this());
}

void HttpSession::reject(http::status status, const std::string& message, const char* type) {
  stop_read_deadline();
  in_request_ = true;
  ++answer_seq_;
  keep_alive_ = false;
  head_only_ = false;
  api::ApiError err{static_cast<int>(status), message, type, "", ""};
  response_ = std::make_unique<Response>(status, 11);
  response_->set(http::field::content_type, "application/json");
  response_->body() = err.to_json();
  if (parser_) handler_.decorate_refusal(parser_->get(), *response_);
  write_response();
}

void HttpSession::respond(Response&& response) {
  // Moved into its final place once, whether the dispatch runs inline (on
  // the connection's thread) or is posted.
  auto owned = std::make_unique<Response>(std::move(response));
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), r = std::move(owned)]() mutable {
    if (self->closed_ || !self->in_request_ || self->response_ || self->rendered_ || self->head_) return;
    self->response_ = std::move(r);
    self->write_response();
  });
}

void HttpSession::respond_rendered(RenderedAnswer&& answer) {
  auto owned = std::make_unique<RenderedAnswer>(std::move(answer));
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), r = std::move(owned)]() mutable {
    if (self->closed_ || !self->in_request_ || self->response_ || self->rendered_ || self->head_) return;
    self->rendered_ = std::move(r);
    self->write_rendered();
  });
}

void HttpSession::write_rendered() {
  watching_ = false;
  serialize_rendered_head(*rendered_, keep_alive_, head_bytes_);
  stream_expires_after(options_.write_timeout);
  // A HEAD answer's head says the Content-Length the body would have.
  std::array<net::const_buffer, 2> buffers{net::buffer(head_bytes_),
                                           net::buffer(rendered_->body.data(), head_only_ ? 0 : rendered_->body.size())};
  net::async_write(stream_, buffers, [self = shared_from_this(), ka = keep_alive_](beast::error_code ec, size_t) {
    self->on_written(ec, ka);
  });
}

void HttpSession::write_response() {
  watching_ = false;
  response_->keep_alive(keep_alive_);
  // An upstream's answer to a forwarded HEAD has no body and keeps its
  // Content-Length; every other answer's length is its body's.
  if (!(head_only_ && response_->body().empty() && response_->has_content_length())) response_->prepare_payload();
  // No Content-Length on a 204 (RFC 9110 8.6); this Beast's prepare_payload
  // writes "0".
  if (response_->result() == http::status::no_content) response_->erase(http::field::content_length);
  stream_expires_after(options_.write_timeout);
  // The head is serialized here into one buffer and sent with the body in
  // one gathered write: Beast's serializer walks a generic buffer sequence
  // per field, which cost more than the whole head on the cache-hit path.
  serialize_head(*response_, head_bytes_);
  std::array<net::const_buffer, 2> buffers{
      net::buffer(head_bytes_), net::buffer(response_->body().data(), head_only_ ? 0 : response_->body().size())};
  net::async_write(stream_, buffers, [self = shared_from_this(), ka = keep_alive_](beast::error_code ec, size_t) {
    self->on_written(ec, ka);
  });
}

void HttpSession::on_written(beast::error_code ec, bool keep_alive) {
  response_.reset();
  rendered_.reset();
  if (ec) return close_now();
  finish_answer(keep_alive);
}

void HttpSession::finish_answer(bool keep_alive) {
  gone_ = nullptr;
  watching_ = false;
  in_request_ = false;
  if (watch_read_pending_) {
    // One read at a time: stop the watch first; its handler continues.
    after_watch_ = keep_alive ? AfterWatch::read : AfterWatch::close;
    beast::error_code ec;
    stream_.socket().cancel(ec);
    return;
  }
  if (!keep_alive) return close_gracefully();
  do_read();
}

void HttpSession::close_gracefully() {
  if (closed_) return;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  // Let the peer read our last answer before the socket goes: drain what it
  // still sends for a short, bounded while, then close.
  auto sink = std::make_shared<std::array<char, 4096>>();
  auto budget = std::make_shared<size_t>(1 << 20);
  stream_expires_after(std::chrono::seconds(2));
  auto step = std::make_shared<std::function<void(beast::error_code, size_t)>>();
  *step = [self = shared_from_this(), sink, budget, step](beast::error_code rec, size_t n) {
    if (rec || n >= *budget) {
      self->close_now();
      *step = nullptr;  // break the self-reference
      return;
    }
    *budget -= n;
    self->stream_.async_read_some(net::buffer(*sink), *step);
  };
  stream_.async_read_some(net::buffer(*sink), *step);
}

void HttpSession::close_now() {
  if (closed_) return;
  closed_ = true;
  stop_read_deadline();
  ++read_deadline_seq_;
  read_timer_pending_ = false;
  read_deadline_.cancel();  // the session need not live until the timer's expiry
  if (source_) {
    source_->abort();
    source_.reset();
  }
  if (gone_) {
    auto gone = std::move(gone_);
    gone_ = nullptr;
    gone();
  }
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

// ---- streamed answers -----------------------------------------------------

void HttpSession::stream(http::response<http::empty_body>&& head, std::shared_ptr<StreamSource> source) {
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), h = std::move(head), source]() mutable {
    if (self->closed_ || !self->in_request_ || self->response_ || self->rendered_ || self->head_) {
      source->abort();
      return;
    }
    self->head_ = std::make_unique<http::response<http::empty_body>>(std::move(h));
    self->head_->keep_alive(self->keep_alive_);
    self->head_->chunked(true);
    self->source_ = std::move(source);
    self->stream_done_ = false;
    self->source_drained_ = false;
    self->stream_expires_after(self->options_.write_timeout);
    serialize_head(*self->head_, self->head_bytes_);
    net::async_write(self->stream_, net::buffer(self->head_bytes_),
                     [self](beast::error_code ec, size_t) { self->on_stream_head(ec); });
  });
}

void HttpSession::on_stream_head(beast::error_code ec) {
  if (ec) return close_now();
  std::weak_ptr<HttpSession> weak = shared_from_this();
  auto exec = stream_.get_executor();
  source_->start([weak, exec] {
    auto self = weak.lock();
    if (!self || self->wake_pending_.exchange(true)) return;
    net::post(exec, [self] {
      self->wake_pending_ = false;
      self->pump();
    });
  });
  watch_disconnect();
  pump();
}

void HttpSession::pump() {
  if (closed_ || chunk_writing_ || stream_done_) return;
  auto self = shared_from_this();
  if (source_drained_) {  // the body is complete: send the terminating chunk
    chunk_writing_ = true;
    stream_expires_after(options_.write_timeout);
    net::async_write(stream_, http::make_chunk_last(), [self](beast::error_code ec, size_t) { self->on_chunk(ec, true); });
    return;
  }
  if (!source_) return;
  chunk_.clear();
  source_drained_ = source_->pull(chunk_) == StreamSource::Status::done;
  if (chunk_.empty()) {
    if (source_drained_) pump();
    return;  // else wait for the next wake
  }
  chunk_writing_ = true;
  stream_expires_after(options_.write_timeout);
  net::async_write(stream_, http::make_chunk(net::const_buffer(chunk_.data(), chunk_.size())),
                   [self](beast::error_code ec, size_t) { self->on_chunk(ec, false); });
}

void HttpSession::on_chunk(beast::error_code ec, bool last) {
  chunk_writing_ = false;
  if (ec) return close_now();
  if (last) {
    stream_done_ = true;
    source_.reset();
    head_.reset();
    bool ka = keep_alive_;
    return finish_answer(ka);
  }
  pump();
}

// ---- disconnect detection while an answer is pending ------------------------

void HttpSession::on_disconnect(std::function<void()> gone) {
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), g = std::move(gone)]() mutable {
    if (self->closed_) {
      g();
      return;
    }
    self->gone_ = std::move(g);
    self->watch_disconnect();
  });
}

void HttpSession::watch_disconnect() {
  if (watching_ || closed_ || watch_read_pending_) return;
  watching_ = true;
  watch_read_pending_ = true;
  // A real read, not a readiness wait (asio may complete a wait at once on
  // stale readiness, which looked like a disconnect): it completes only with
  // bytes, which are a pipelined request and stay in buffer_ for the parser,
  // or with EOF/reset, which means the peer left. Nothing else reads buffer_
  // while an answer is in progress.
  stream_.socket().async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->watch_read_pending_ = false;
    if (n > 0) self->buffer_.commit(n);
    if (self->closed_) return;
    auto after = std::exchange(self->after_watch_, AfterWatch::nothing);
    if (after == AfterWatch::read) return self->do_read();
    if (after == AfterWatch::close) return self->close_gracefully();
    self->watching_ = false;
    if (ec && ec != net::error::operation_aborted) self->close_now();
  });
}

}  // namespace reprox
