// Runs tests/proxy/backend/scripted_upstream.js as a child process on a free port
// for the length of a test, and queries its /__ inspection endpoints.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/json.hpp"

namespace reprox::testing {

class ScriptedServer {
 public:
  // Starts node on --port 0 and waits for "listening PORT". On failure
  // port() is 0 and error() says why (node or the script missing, ...).
  ScriptedServer();
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  uint16_t port() const { return port_; }
  const std::string& error() const { return error_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // GET/POST on the server itself (blocking); the parsed JSON body, or null.
  json::Value get_json(const std::string& target) const;
  json::Value post_json(const std::string& target) const;
  // The "/__count" fields.
  int64_t count(const std::string& field) const;

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string error_;
};

// A port on 127.0.0.1 that refuses connections (bound once, then closed).
uint16_t closed_port();

}  // namespace reprox::testing
