// The HTTP server: an acceptor, N I/O threads running one io_context, the
// connection cap, and graceful drain on SIGINT/SIGTERM.
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "proxy/server/connection_tracker.hpp"
#include "proxy/server/http_session.hpp"
#include "proxy/server/server_options.hpp"

namespace reprox {

class Server {
 public:
  Server(net::io_context& ioc, ServerOptions options, RequestHandler& handler);
  // Binds and listens; throws on failure (start-up only).
  void listen();
  unsigned short port() const { return port_; }
  // Stops accepting and closes idle connections; in-flight answers go on.
  void begin_drain();
  size_t connections() const { return tracker_->count(); }
  bool draining() const { return tracker_->draining(); }

 private:
  void do_accept();
  void on_accept(beast::error_code ec, tcp::socket socket);

  net::io_context& ioc_;
  ServerOptions options_;
  RequestHandler& handler_;
  tcp::acceptor acceptor_;
  std::shared_ptr<ConnectionTracker> tracker_;
  unsigned short port_ = 0;
  bool stopped_ = false;
};

}  // namespace reprox
