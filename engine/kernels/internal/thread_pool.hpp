#pragma once
// A small fixed pool for the kernels. run(tasks, fn) calls fn(i) once for each
// i in [0, tasks), spread over the workers and the calling thread, and returns
// when all calls have finished. Calls to run() from different threads are
// serialized by a mutex; fn must not call run() itself.
//
// Waking a sleeping thread costs tens of microseconds (a futex round trip,
// more in a VM), and a model pass makes hundreds of run() calls a few
// microseconds apart, so workers spin for a short while (kSpin) on the
// batch counter before they sleep, and run() spins on the unfinished count
// before it sleeps. An idle pool sleeps.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace reprox::kernels::internal {

class ThreadPool {
 public:
  static ThreadPool& instance();
  ~ThreadPool();

  // Total threads including the caller (>= 1). Restarts the workers.
  void set_threads(int threads);
  int threads() const { return threads_; }

  void run(int tasks, const std::function<void(int)>& fn);

 private:
  ThreadPool() = default;
  void stop_workers();
  void worker_loop();
  void drain_tasks();

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run() at a time

  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // written under mutex_; read lock-free while spinning
  bool stopping_ = false;
  const std::function<void(int)>* fn_ = nullptr;
  int tasks_ = 0;
  int next_task_ = 0;
  std::atomic<int> unfinished_{0};       // written under mutex_; read lock-free while spinning
};

}  // namespace reprox::kernels::internal
