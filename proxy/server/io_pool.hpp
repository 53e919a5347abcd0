// N I/O threads, each running its own io_context (one context per thread).
//
// One io_context run by N threads makes every handler go through the
// scheduler's one mutex; on a loaded 2-core box that lock was the busiest
// futex in a cache-hit profile (half of all futex calls). Here each thread
// owns a context, so its handlers never contend with another I/O thread's.
// Connections are spread over the contexts round-robin (next()); everything
// a connection does stays on its context, whose one thread is the
// connection's implicit strand (see ConnectionStrand): a context must never
// be run by a second thread. Other threads (the Redis workers, the engine)
// may still post to any context.
//
// Each context holds a work guard, so run() returns only after stop().
#pragma once

#include <atomic>
#include <chrono>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

namespace reprox {

class IoPool {
 public:
  explicit IoPool(int threads);  // at least 1
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  // Context 0: the acceptor, signals and drain timers live here; its thread
  // is the one that calls run().
  boost::asio::io_context& main() { return *contexts_.front(); }
  // The next context, round-robin; thread-safe.
  boost::asio::io_context& next();
  size_t size() const { return contexts_.size(); }
  // Every context, context 0 first (e.g. to give each its own connections).
  std::vector<boost::asio::io_context*> contexts() const;

  // Runs context 0 on the calling thread and the others on their own
  // threads; returns after stop() once every thread has finished.
  void run();
  // Stops every context (callable from any thread, also from a handler).
  void stop();
  // After run() has returned: runs the handlers that are ready, on the
  // calling thread, round after round until a round finds none (or `limit`
  // passes), so that closes and cancellations complete and release what
  // they own before the objects they reference are destroyed.
  void finish(std::chrono::milliseconds limit);

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<Guard> guards_;
  std::atomic<size_t> next_{0};
};

}  // namespace reprox
