#pragma once
// A small fixed pool for the kernels. run(tasks, fn) calls fn(i) once for each
// i in [0, tasks), spread over the workers and the calling thread, and returns
// when all calls have finished. Calls to run() from different threads are
// serialized by a mutex; fn must not call run() itself.
//
// Waking a sleeping thread costs tens of microseconds (a futex round trip,
// more in a VM), and a model pass makes hundreds of run() calls a few
// microseconds apart, so workers spin for a short while (kSpin) on the
// batch word before they sleep, and run() spins on the unfinished count
// before it sleeps. An idle pool sleeps.
//
// Tasks are claimed lock-free from one 64-bit word that packs the batch
// number with the task count and the next task index, so a worker that
// wakes late can never claim a task of a newer batch by mistake: its claim
// fails once the batch number has moved on. That makes many small tasks
// cheap, which lets callers split work finely and keep the threads level.
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
  static constexpr int kMaxTasks = (1 << 20) - 1;

  static ThreadPool& instance();
  ~ThreadPool();

  // Total threads including the caller (>= 1). Restarts the workers.
  void set_threads(int threads);
  int threads() const { return threads_; }

  // More than kMaxTasks tasks run on the calling thread alone.
  void run(int tasks, const std::function<void(int)>& fn);

 private:
  ThreadPool() = default;
  void stop_workers();
  void worker_loop();
  // Claims and runs tasks of batch `batch` until none is left.
  void drain_tasks(uint64_t batch);

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run() at a time

  // state_ = batch << 40 | tasks << 20 | next task index. Written by run()
  // (new batch, release) and by claims (compare-exchange).
  std::atomic<uint64_t> state_{0};
  std::atomic<const std::function<void(int)>*> fn_{nullptr};  // stored before state_
  std::atomic<int> unfinished_{0};

  std::mutex mutex_;  // for the sleeping paths only
  std::condition_variable wake_;
  std::condition_variable done_;
  bool stopping_ = false;  // guarded by mutex_
};

}  // namespace reprox::kernels::internal
