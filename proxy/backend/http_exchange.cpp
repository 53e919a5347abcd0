#include "proxy/backend/http_exchange.hpp"

#include <boost/asio/post.hpp>

namespace reprox::backend {
namespace {

constexpr size_t kReadChunkBytes = 16 * 1024;

bool is_http_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_version).category();
}

bool is_closed(const beast::error_code& ec) {
  return ec == net::error::eof || ec == http::error::end_of_stream ||
         ec == http::error::partial_message || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe;
}

}  // namespace

std::shared_ptr<HttpExchange> HttpExchange::start(net::io_context& ioc, const HttpUrl& url,
                                                  const ExchangeLimits& limits,
                                                  http::request<http::string_body> request,
                                                  std::shared_ptr<ExchangeObserver> observer,
                                                  CancelFlag cancelled) {
  auto self = std::make_shared<HttpExchange>(ioc, url, limits, std::move(request),
                                             std::move(observer), std::move(cancelled));
  net::post(self->strand_, [self] {
    if (self->stopped()) return;
    self->resolver_.async_resolve(
        self->url_.host, std::to_string(self->url_.port),
        beast::bind_front_handler(&HttpExchange::on_resolve, self));
  });
  return self;
}

HttpExchange::HttpExchange(net::io_context& ioc, const HttpUrl& url, const ExchangeLimits& limits,
                           http::request<http::string_body> request,
                           std::shared_ptr<ExchangeObserver> observer, CancelFlag cancelled)
    : strand_(net::make_strand(ioc)),
      resolver_(strand_),
      stream_(strand_),
      url_(url),
      limits_(limits),
      request_(std::move(request)),
      observer_(std::move(observer)),
      cancelled_(std::move(cancelled)),
      chunk_(kReadChunkBytes) {}

void HttpExchange::cancel() {
  if (cancelled_->exchange(true)) return;
  net::post(strand_, [self = shared_from_this()] { self->close(); });
}

void HttpExchange::close() {
  observer_.reset();
  resolver_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.close();
}

void HttpExchange::fail(TransportFailure kind, const beast::error_code& ec) {
  if (stopped()) return close();
  auto observer = std::move(observer_);
  close();
  observer->on_failure(TransportError{kind, ec ? ec.message() : std::string()});
}

void HttpExchange::on_resolve(beast::error_code ec, net::ip::tcp::resolver::results_type results) {
  if (stopped()) return close();
  if (ec) return fail(TransportFailure::resolve_failed, ec);
  stream_.expires_after(limits_.connect_timeout);
  stream_.async_connect(results, beast::bind_front_handler(&HttpExchange::on_connect,
                                                           shared_from_this()));
}

void HttpExchange::on_connect(beast::error_code ec, const net::ip::tcp::endpoint&) {
  if (stopped()) return close();
  if (ec == beast::error::timeout) return fail(TransportFailure::connect_timeout, ec);
  if (ec) return fail(TransportFailure::connect_failed, ec);
  // The first-byte clock runs from the start of the write to the end of the
  // response header.
  stream_.expires_after(limits_.first_byte_timeout);
  http::async_write(stream_, request_,
                    beast::bind_front_handler(&HttpExchange::on_write, shared_from_this()));
}

void HttpExchange::on_write(beast::error_code ec, size_t) {
  if (stopped()) return close();
  if (ec == beast::error::timeout) return fail(TransportFailure::first_byte_timeout, ec);
  if (ec) return fail(TransportFailure::connection_lost, ec);
  parser_.emplace();
  parser_->body_limit(limits_.max_response_bytes);
  if (request_.method() == http::verb::head) parser_->skip(true);
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&HttpExchange::on_header, shared_from_this()));
}

void HttpExchange::on_header(beast::error_code ec, size_t) {
  if (stopped()) return close();
  if (ec == beast::error::timeout) return fail(TransportFailure::first_byte_timeout, ec);
  if (is_closed(ec)) return fail(TransportFailure::connection_lost, ec);
  if (ec == http::error::header_limit) return fail(TransportFailure::response_too_large, ec);
  if (is_http_error(ec)) return fail(TransportFailure::bad_http, ec);
  if (ec) return fail(TransportFailure::connection_lost, ec);
  if (!observer_->on_header(parser_->get().base())) return close();
  read_body();
}

void HttpExchange::read_body() {
  if (stopped()) return close();
  if (parser_->is_done()) {
    auto observer = std::move(observer_);
    close();
    observer->on_end();
    return;
  }
  parser_->get().body().data = chunk_.data();
  parser_->get().body().size = chunk_.size();
  stream_.expires_after(limits_.idle_timeout);
  http::async_read_some(stream_, buffer_, *parser_,
                        beast::bind_front_handler(&HttpExchange::on_read, shared_from_this()));
}

void HttpExchange::on_read(beast::error_code ec, size_t) {
  if (stopped()) return close();
  if (ec == http::error::need_buffer) ec = {};
  size_t filled = chunk_.size() - parser_->get().body().size;
  if (filled > 0 && !observer_->on_body(std::string_view(chunk_.data(), filled))) return close();
  if (stopped()) return close();
  if (ec == beast::error::timeout) return fail(TransportFailure::idle_timeout, ec);
  if (ec == http::error::body_limit) return fail(TransportFailure::response_too_large, ec);
  if (is_closed(ec)) return fail(TransportFailure::connection_lost, ec);
  if (is_http_error(ec)) return fail(TransportFailure::bad_http, ec);
  if (ec) return fail(TransportFailure::connection_lost, ec);
  read_body();
}

}  // namespace reprox::backend
