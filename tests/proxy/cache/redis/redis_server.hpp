// Test support: a real redis-server child process on a free loopback port
// (and optionally a unix socket), with no persistence, in a temp dir.
// Start failures throw (test setup); the destructor kills it and removes the
// directory.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "proxy/cache/redis/redis_connection.hpp"

namespace reprox::testing {

struct RedisServerOptions {
  std::string password;     // --requirepass
  bool unix_socket = false;  // also listen on <dir>/redis.sock
};

class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string socket_path() const { return dir_ + "/redis.sock"; }
  std::string url(int db = 0) const;  // redis://[:password@]127.0.0.1:port[/db]
  pid_t pid() const { return pid_; }

  void start();      // on the same port; waits until it answers PING
  void kill_hard();  // SIGKILL and reap
  void pause();      // SIGSTOP
  void resume();     // SIGCONT
  // One command on a fresh blocking connection (AUTH as needed); throws on
  // I/O errors.
  RedisValue command(const RedisArgv& argv, int db = 0) const;

 private:
  RedisServerOptions options_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

int free_loopback_port();
std::string redis_server_binary();  // from CMake; tests fail if missing

}  // namespace reprox::testing
