// RedisStore set-ups shared by the Redis store tests: short command timeouts
// against the test's own redis-server, and a synchronous purge.
#pragma once

#include <atomic>
#include <chrono>
#include <future>

#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"

namespace reprox::testing {

// One store on `server`: 500 ms commands, 1 s get deadline.
inline RedisStoreOptions store_options(const RedisServer& server) {
  auto o = redis_store_options_from_url(server.url());
  o.timeouts.command = std::chrono::milliseconds(500);
  o.get_deadline = std::chrono::milliseconds(1000);
  return o;
}

// One of several instances sharing `server`: named `id`, polling the purge
// epoch every 20 ms; counts its errors in *errors when given.
inline RedisStoreOptions instance_options(const RedisServer& server, const char* id,
                                          std::atomic<int>* errors = nullptr) {
  auto o = store_options(server);
  o.epoch_poll = std::chrono::milliseconds(20);
  o.instance_id = id;
  if (errors) o.on_error = [errors](const char*) { ++*errors; };
  return o;
}

// Purges `scope` and waits for the store's answer.
inline bool purge_sync(RedisStore& store, PurgeScope scope) {
  std::promise<bool> done;
  auto f = done.get_future();
  store.purge(scope, [&done](bool ok) { done.set_value(ok); });
  return f.get();
}

}  // namespace reprox::testing
