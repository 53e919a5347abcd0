#include "tests/proxy/backend/scripted_server.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

extern char** environ;

namespace reprox::testing {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

json::Value request_json(uint16_t port, http::verb verb, const std::string& target) {
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  stream.expires_after(std::chrono::seconds(5));
  stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return {};
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.prepare_payload();
  http::write(stream, req, ec);
  if (ec) return {};
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res, ec);
  if (ec) return {};
  json::Value out;
  if (json::parse(res.body(), out)) return {};
  return out;
}

}  // namespace

ScriptedServer::ScriptedServer() {
  int fds[2];
  if (pipe(fds) != 0) {
    error_ = "pipe failed";
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string node = REPROX_NODE_EXECUTABLE;
  std::string script = REPROX_SCRIPTED_UPSTREAM;
  std::string port_flag = "--port", zero = "0";
  char* argv[] = {node.data(), script.data(), port_flag.data(), zero.data(), nullptr};
  int rc = posix_spawn(&pid_, node.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    pid_ = -1;
    close(fds[0]);
    error_ = "cannot run node at '" + node + "'";
    return;
  }
  std::string line;
  pollfd pfd{fds[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && poll(&pfd, 1, 15000) > 0) {
    char buf[256];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (line.rfind("listening ", 0) != 0) {
    error_ = "scripted upstream " + script + " did not start (printed \"" + line + "\")";
    return;
  }
  port_ = static_cast<uint16_t>(std::stoi(line.substr(10)));
}

ScriptedServer::~ScriptedServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
}

json::Value ScriptedServer::get_json(const std::string& target) const {
  return request_json(port_, http::verb::get, target);
}

json::Value ScriptedServer::post_json(const std::string& target) const {
  return request_json(port_, http::verb::post, target);
}

int64_t ScriptedServer::count(const std::string& field) const {
  json::Value counts = get_json("/__count");
  const json::Value* v = counts.find(field);
  return v && v->is_number() ? v->as_int() : -1;
}

uint16_t closed_port() {
  net::io_context ioc;
  net::ip::tcp::acceptor acceptor(ioc, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  uint16_t port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

}  // namespace reprox::testing
