#include "internal/thread_pool.hpp"

#include <chrono>

namespace reprox::kernels::internal {
namespace {

constexpr std::chrono::microseconds kSpin{150};

// Spins until done() or kSpin has passed; true if done() became true.
template <typename Done>
bool spin_until(const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return done();
  }
}

}  // namespace

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool;
  return pool;
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = false;
}

void ThreadPool::set_threads(int threads) {
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  if (threads < 1) threads = 1;
  if (threads == threads_) return;
  stop_workers();
  threads_ = threads;
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

// Claims and runs tasks of the current batch until none is left. Called with
// mutex_ unlocked.
void ThreadPool::drain_tasks() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (fn_ != nullptr && next_task_ < tasks_) {
    const int task = next_task_++;
    const std::function<void(int)>* fn = fn_;
    lock.unlock();
    (*fn)(task);
    lock.lock();
    if (--unfinished_ == 0) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain_tasks();
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  if (tasks == 1 || workers_.empty()) {
    for (int i = 0; i < tasks; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    tasks_ = tasks;
    next_task_ = 0;
    unfinished_ = tasks;
    ++generation_;
  }
  wake_.notify_all();
  drain_tasks();
  spin_until([&] { return unfinished_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return unfinished_ == 0; });
  fn_ = nullptr;
}

}  // namespace reprox::kernels::internal
