// Parses the --redis URL:
//   redis://[[user]:password@]host[:port][/db][?connect_timeout_ms=N&command_timeout_ms=N]
//   unix://[[user]:password@]/path/to/socket[?db=N&connect_timeout_ms=N&command_timeout_ms=N]
// Passwords may be percent-encoded. Load time only: errors are returned.
#pragma once

#include <optional>
#include <string>

namespace reprox {

struct RedisEndpoint {
  bool is_unix = false;
  std::string host;  // tcp
  int port = 6379;   // tcp
  std::string path;  // unix socket
  std::string username;  // empty: AUTH password (Redis < 6 form)
  std::string password;  // empty: no AUTH
  int db = 0;            // SELECT when non-zero
  // Overrides from the query string; -1 = not given.
  int connect_timeout_ms = -1;
  int command_timeout_ms = -1;

  std::string describe() const;  // for logs: never shows the password
};

std::optional<RedisEndpoint> parse_redis_url(const std::string& url, std::string* error);

}  // namespace reprox
