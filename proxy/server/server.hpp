// The HTTP server: an acceptor, connections spread over the I/O pool's
// contexts, the connection cap, and graceful drain on SIGINT/SIGTERM.
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "proxy/server/connection_tracker.hpp"
#include "proxy/server/http_session.hpp"
#include "proxy/server/io_pool.hpp"
#include "proxy/server/server_options.hpp"

namespace reprox {

class Server {
 public:
  Server(IoPool& pool, ServerOptions options, RequestHandler& handler);
  // Binds and listens; throws on failure (start-up only).
  void listen();
  unsigned short port() const { return port_; }
  // Stops accepting and closes idle connections; in-flight answers go on.
  void begin_drain();
  // After the drain: closes the connections still open (their answers are
  // cut); run the pool again (IoPool::finish) to let the closes complete.
  void abort_connections() { tracker_->abort_all(); }
  size_t connections() const { return tracker_->count(); }
  bool draining() const { return tracker_->draining(); }

 private:
  void do_accept();
  void on_accept(beast::error_code ec, ConnectionSocket socket);

  IoPool& pool_;
  ServerOptions options_;
  RequestHandler& handler_;
  tcp::acceptor acceptor_;
  std::shared_ptr<ConnectionTracker> tracker_;
  unsigned short port_ = 0;
  bool stopped_ = false;
};

}  // namespace reprox
