// One HTTP/1.1 request/response with an upstream on a fresh TCP connection,
// run on its own strand of the given io_context: resolve, connect (connect
// timeout), write and read the response header (first-byte timeout), then
// the body piece by piece (idle timeout between pieces, total size bounded).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "proxy/backend/http_url.hpp"
#include "proxy/backend/upstream_errors.hpp"

namespace reprox::backend {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct ExchangeLimits {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds first_byte_timeout{60000};
  std::chrono::milliseconds idle_timeout{60000};
  size_t max_response_bytes = 64u << 20;
};

// Receives one exchange's progress. Every call runs on the exchange's strand,
// in order; none is made once cancel() has taken effect, and at most one of
// on_end / on_failure ends the sequence.
class ExchangeObserver {
 public:
  virtual ~ExchangeObserver() = default;
  // Return false to stop: the connection is closed and no call follows.
  virtual bool on_header(const http::response_header<>& header) = 0;
  virtual bool on_body(std::string_view bytes) = 0;
  virtual void on_end() = 0;
  virtual void on_failure(const TransportError& error) = 0;
};

// Set once by cancel(); observers check it before each call they pass on.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  static std::shared_ptr<HttpExchange> start(net::io_context& ioc, const HttpUrl& url,
                                             const ExchangeLimits& limits,
                                             http::request<http::string_body> request,
                                             std::shared_ptr<ExchangeObserver> observer,
                                             CancelFlag cancelled);

  // Any thread. Closes the connection; the observer gets no further call
  // that starts after this returns.
  void cancel();

  HttpExchange(net::io_context& ioc, const HttpUrl& url, const ExchangeLimits& limits,
               http::request<http::string_body> request, std::shared_ptr<ExchangeObserver> observer,
               CancelFlag cancelled);

 private:
  bool stopped() const { return !observer_ || cancelled_->load(); }
  void on_resolve(beast::error_code ec, net::ip::tcp::resolver::results_type results);
  void on_connect(beast::error_code ec, const net::ip::tcp::endpoint& endpoint);
  void on_write(beast::error_code ec, size_t bytes);
  void on_header(beast::error_code ec, size_t bytes);
  void read_body();
  void on_read(beast::error_code ec, size_t bytes);
  void fail(TransportFailure kind, const beast::error_code& ec);
  void close();

  net::strand<net::io_context::executor_type> strand_;
  net::ip::tcp::resolver resolver_;
  beast::tcp_stream stream_;
  HttpUrl url_;
  ExchangeLimits limits_;
  http::request<http::string_body> request_;
  std::shared_ptr<ExchangeObserver> observer_;
  CancelFlag cancelled_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  std::vector<char> chunk_;
};

}  // namespace reprox::backend
