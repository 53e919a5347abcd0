// Passthrough of non-chat requests to the upstream: request rewriting and
// the observer that buffers the upstream's response for the client.
#pragma once

#include <functional>
#include <string>

#include "proxy/backend/http_exchange.hpp"

namespace reprox::backend {

// Hop-by-hop headers (RFC 7230 6.1): Connection and the headers it names,
// Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade.
void drop_hop_by_hop(http::fields& fields);

// The client's request as sent upstream: target joined to url.root, Host set,
// hop-by-hop headers and Content-Length replaced, Authorization replaced by
// the api_key when one is set, no keep-alive.
http::request<http::string_body> make_forward_request(http::request<http::string_body> request,
                                                      const HttpUrl& url,
                                                      const std::string& api_key);

// Collects the whole response; calls `done` exactly once, on the exchange's
// strand, with it or with an OpenAI-style 502/504 error response.
class ForwardObserver : public ExchangeObserver {
 public:
  using Response = http::response<http::string_body>;
  ForwardObserver(std::function<void(Response)> done, std::string upstream_name, bool head);

  bool on_header(const http::response_header<>& header) override;
  bool on_body(std::string_view bytes) override;
  void on_end() override;
  void on_failure(const TransportError& error) override;

 private:
  void finish(Response response);

  std::function<void(Response)> done_;
  std::string upstream_name_;
  bool head_;
  Response response_;
};

}  // namespace reprox::backend
