#include "proxy/server/server.hpp"

#include <spdlog/spdlog.h>

namespace reprox {

Server::Server(IoPool& pool, ServerOptions options, RequestHandler& handler)
    : pool_(pool), options_(std::move(options)), handler_(handler), acceptor_(net::make_strand(pool.main())),
      tracker_(std::make_shared<ConnectionTracker>()) {}

void Server::listen() {
  auto address = net::ip::make_address(options_.host);
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
  do_accept();
}

void Server::begin_drain() {
  net::post(acceptor_.get_executor(), [this] {
    stopped_ = true;
    beast::error_code ec;
    acceptor_.close(ec);
  });
  tracker_->drain_all();
}

void Server::do_accept() {
  // Each connection lives on the next context of the pool, whose one thread
  // is the connection's (implicit) strand; see ConnectionStrand.
  acceptor_.async_accept(pool_.next().get_executor(),
                         [this](beast::error_code ec, ConnectionSocket socket) { on_accept(ec, std::move(socket)); });
}

void Server::on_accept(beast::error_code ec, ConnectionSocket socket) {
  if (stopped_) return;
  if (ec) {
    // Keep accepting after transient errors (EMFILE, ECONNABORTED, ...).
    spdlog::warn("accept failed: {}", ec.message());
    if (ec == net::error::operation_aborted) return;
  } else {
    socket.set_option(tcp::no_delay(true), ec);
    auto session = std::make_shared<HttpSession>(std::move(socket), handler_, options_, tracker_);
    uint64_t id = tracker_->add(session, options_.max_connections);
    if (id == 0) {
      spdlog::warn("connection cap {} reached; refusing a connection", options_.max_connections);
    } else {
      session->set_tracker_id(id);
      session->run();
    }
  }
  do_accept();
}

}  // namespace reprox
