// Test support: one io_context run by its own thread (as one of the
// server's I/O threads), and a CacheStore adapter that makes every get from
// that thread, so the Redis store's I/O-thread lookups (RedisIoChannel) are
// what the store tests and the conformance suite exercise.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "proxy/cache/cache_store.hpp"

namespace reprox::testing {

class IoThread {
 public:
  IoThread() : guard_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~IoThread() { stop(); }
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  boost::asio::io_context& io() { return io_; }
  std::thread::id id() const { return thread_.get_id(); }
  // Runs `fn` on the thread and returns its result (waits at most 5 s;
  // a thread that never runs it fails the test with a default value).
  template <typename Fn>
  auto call(Fn fn) -> decltype(fn()) {
    using R = decltype(fn());
    std::packaged_task<R()> task(std::move(fn));
    auto result = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << "the I/O thread did not run the task within 5 s";
      std::abort();  // the task refers to this frame: no safe way on
    }
    return result.get();
  }
  void stop() {
    if (!thread_.joinable()) return;
    guard_.reset();
    io_.stop();
    thread_.join();
  }

 private:
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// get() runs the inner store's get_on() on the I/O thread, answering there;
// the rest goes straight through.
class OnIoThreadStore final : public CacheStore {
 public:
  OnIoThreadStore(CacheStore& inner, IoThread& thread) : inner_(inner), thread_(thread) {}
  void get(const std::string& key, std::function<void(Lookup)> done) override {
    auto& io = thread_.io();
    boost::asio::post(io, [this, &io, key, done = std::move(done)]() mutable {
      auto post = [&io](std::function<void()> task) { boost::asio::post(io, std::move(task)); };
      inner_.get_on(key, post, std::move(done));
    });
  }
  void put(const std::string& key, std::shared_ptr<const Generation> g, std::chrono::seconds ttl) override {
    inner_.put(key, std::move(g), ttl);
  }
  void erase(const std::string& key) override { inner_.erase(key); }
  void extend(const std::string& key, std::chrono::seconds ttl) override { inner_.extend(key, ttl); }
  uint64_t clear() override { return inner_.clear(); }
  const char* tier() const override { return inner_.tier(); }

 private:
  CacheStore& inner_;
  IoThread& thread_;
};

}  // namespace reprox::testing
