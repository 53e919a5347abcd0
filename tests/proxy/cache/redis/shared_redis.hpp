// Test support for the conformance suites: one real redis-server per test
// binary, started on first use and killed at exit, and store options with
// the generous timeouts of a conformance run (not a chaos test).
#pragma once

#include <chrono>

#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"

namespace reprox::testing {

inline RedisServer& shared_redis() {
  static RedisServer server;
  return server;
}

inline RedisStoreOptions conformance_redis_options() {
  auto o = redis_store_options_from_url(shared_redis().url());
  o.timeouts.command = std::chrono::milliseconds(3000);  // a loaded 2-core CI box moves a 4 MB entry slowly
  o.get_deadline = std::chrono::milliseconds(5000);
  return o;
}

}  // namespace reprox::testing
