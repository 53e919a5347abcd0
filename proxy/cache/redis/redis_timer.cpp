#include "proxy/cache/redis/redis_timer.hpp"

#include <pthread.h>

namespace reprox {

TimerQueue::TimerQueue()
    : thread_([this] {
        pthread_setname_np(pthread_self(), "redis-timer");
        run();
      }) {}

TimerQueue::~TimerQueue() { stop(); }

void TimerQueue::schedule_at(Clock::time_point when, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    bool earliest = items_.empty() || when < items_.top().when;
    items_.push(Item{when, next_seq_++, std::move(task)});
    if (!earliest) return;
  }
  cv_.notify_one();
}

void TimerQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  std::lock_guard lock(mutex_);
  items_ = {};
}

void TimerQueue::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (items_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto when = items_.top().when;
    if (Clock::now() < when) {
      cv_.wait_until(lock, when);
      continue;
    }
    auto task = std::move(const_cast<Item&>(items_.top()).task);
    items_.pop();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace reprox
