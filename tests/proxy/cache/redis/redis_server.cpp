#include "tests/proxy/cache/redis/redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace reprox::testing {

std::string redis_server_binary() { return REPROX_REDIS_SERVER; }

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot find a free port");
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
  char tmpl[] = "/tmp/reprox-redis-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  port_ = free_loopback_port();
  start();
}

RedisServer::~RedisServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGCONT);
    kill_hard();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string RedisServer::url(int db) const {
  std::string u = "redis://";
  if (!options_.password.empty()) u += ":" + options_.password + "@";
  u += "127.0.0.1:" + std::to_string(port_);
  if (db != 0) u += "/" + std::to_string(db);
  return u;
}

void RedisServer::start() {
  std::vector<std::string> args = {redis_server_binary(), "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", dir_, "--daemonize", "no",
                                   "--logfile", dir_ + "/redis.log"};
  if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
  if (options_.unix_socket) args.insert(args.end(), {"--unixsocket", socket_path(), "--unixsocketperm", "700"});
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited at start (binary: " + redis_server_binary() + ")");
    }
    try {
      auto pong = command({"PING"});
      if (pong.str == "PONG" && (!options_.unix_socket || std::filesystem::exists(socket_path()))) return;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("redis-server did not answer PING within 10 s");
}

void RedisServer::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void RedisServer::pause() { ::kill(pid_, SIGSTOP); }
void RedisServer::resume() { ::kill(pid_, SIGCONT); }

RedisValue RedisServer::command(const RedisArgv& argv, int db) const {
  RedisEndpoint ep;
  ep.host = "127.0.0.1";
  ep.port = port_;
  ep.password = options_.password;
  ep.db = db;
  RedisConnection conn(ep, RedisTimeouts{std::chrono::milliseconds(500), std::chrono::milliseconds(2000)});
  std::string error;
  std::vector<RedisValue> replies;
  if (!conn.connect(error) || !conn.run({argv}, replies, error)) throw std::runtime_error("redis: " + error);
  return replies[0];
}

}  // namespace reprox::testing
