#include "engine/kernels/internal/thread_pool.hpp"

#include <chrono>

namespace reprox::kernels::internal {
namespace {

constexpr std::chrono::microseconds kSpin{150};
constexpr uint64_t kField = (uint64_t{1} << 20) - 1;

uint64_t batch_of(uint64_t state) { return state >> 40; }
int tasks_of(uint64_t state) { return static_cast<int>((state >> 20) & kField); }
int index_of(uint64_t state) { return static_cast<int>(state & kField); }

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

void ThreadPool::drain_tasks(uint64_t batch) {
  uint64_t s = state_.load(std::memory_order_acquire);
  for (;;) {
    if (batch_of(s) != batch || index_of(s) >= tasks_of(s)) return;
    if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The claimed task keeps run() from returning, so fn_ is this batch's.
    (*fn_.load(std::memory_order_acquire))(index_of(s));
    if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);  // pairs with run()'s sleeping wait
      done_.notify_all();
    }
    s = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    if (!spin_until([&] { return batch_of(state_.load(std::memory_order_acquire)) != seen; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || batch_of(state_.load(std::memory_order_acquire)) != seen; });
      if (stopping_) return;
    }
    seen = batch_of(state_.load(std::memory_order_acquire));
    drain_tasks(seen);
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  if (tasks == 1 || workers_.empty() || tasks > kMaxTasks) {
    for (int i = 0; i < tasks; ++i) fn(i);
    return;
  }
  const uint64_t batch = (batch_of(state_.load(std::memory_order_relaxed)) + 1) & ((uint64_t{1} << 24) - 1);
  fn_.store(&fn, std::memory_order_relaxed);
  unfinished_.store(tasks, std::memory_order_relaxed);
  {
    // Under mutex_ so that a worker between its check and its sleep cannot miss the wake-up.
    std::lock_guard<std::mutex> lock(mutex_);
    state_.store(batch << 40 | static_cast<uint64_t>(tasks) << 20, std::memory_order_release);
  }
  wake_.notify_all();
  drain_tasks(batch);
  if (!spin_until([&] { return unfinished_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return unfinished_.load(std::memory_order_acquire) == 0; });
  }
}

}  // namespace reprox::kernels::internal
