// A single thread that runs short tasks at given times: the Redis tier's
// deadlines (a get that has not answered by then answers "miss"), breaker
// probes, epoch polls and single-flight polls. Tasks must not block; they
// run on the timer thread in deadline order. Pending tasks are dropped by
// stop().
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace reprox {

class TimerQueue {
 public:
  using Clock = std::chrono::steady_clock;
  TimerQueue();
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  void schedule_at(Clock::time_point when, std::function<void()> task);
  void schedule_after(std::chrono::milliseconds delay, std::function<void()> task) {
    schedule_at(Clock::now() + delay, std::move(task));
  }
  void stop();

 private:
  struct Item {
    Clock::time_point when;
    uint64_t seq;
    std::function<void()> task;
    bool operator>(const Item& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> items_;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace reprox
