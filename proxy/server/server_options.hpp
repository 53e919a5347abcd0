#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace reprox {

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  int io_threads = 2;
  size_t header_limit = 8 * 1024;        // 431 beyond
  size_t body_limit = 1024 * 1024;       // 413 beyond
  std::chrono::milliseconds read_timeout{30000};   // per request; 408 then close
  std::chrono::milliseconds idle_timeout{60000};   // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{30000};  // per write
  size_t max_connections = 10000;
  std::chrono::milliseconds drain_timeout{30000};
};

}  // namespace reprox
