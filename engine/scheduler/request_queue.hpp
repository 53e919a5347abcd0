// The engine's bounded inbox: request threads push jobs, the engine thread
// drains them into its waiting list at the start of each step.
//
// Bound: push() refuses (kFull) when `capacity` jobs are queued and not yet
// drained; the caller answers 429 with Retry-After. The engine drains only as
// many as its waiting list has room for, so queued + waiting stays bounded.
//
// Cancellation is not the queue's business: a job carries its owner's
// cancel flag, and the engine drops a cancelled job, waiting or running, at
// the start of its next step after the job is drained (BatchRunner::drop_cancelled).
//
// Threading: every method is thread-safe. drain() and wait() are for the
// engine thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/scheduler/scheduler.hpp"

namespace reprox::engine::sched {

enum class PushResult { kOk, kFull, kClosed };

template <typename Job>
class RequestQueue {
 public:
  struct Drained {
    std::vector<std::pair<RequestId, Job>> jobs;  // arrival order
  };

  explicit RequestQueue(size_t capacity) : capacity_(capacity) {}

  PushResult push(RequestId id, Job job) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return PushResult::kClosed;
      if (jobs_.size() >= capacity_) return PushResult::kFull;
      jobs_.emplace_back(id, std::move(job));
    }
    cv_.notify_one();
    return PushResult::kOk;
  }

  // Takes up to max_jobs queued jobs (arrival order).
  Drained drain(size_t max_jobs) {
    Drained out;
    std::lock_guard lock(mutex_);
    const size_t n = std::min(max_jobs, jobs_.size());
    for (size_t i = 0; i < n; ++i) {
      out.jobs.push_back(std::move(jobs_.front()));
      jobs_.pop_front();
    }
    return out;
  }

  // Blocks until a job or a cancellation is pending, the queue is closed, or
  // the timeout passes. True if there is something to drain.
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return closed_ || !jobs_.empty(); });
    return !jobs_.empty();
  }

  // Refuses further pushes and wakes the engine; queued jobs stay drainable.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return jobs_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<RequestId, Job>> jobs_;
  bool closed_ = false;
};

}  // namespace reprox::engine::sched
