// The engine's bounded inbox: request threads push jobs, the engine thread
// drains them into its waiting list at the start of each step.
//
// Bound: push() refuses (kFull) when `capacity` jobs are queued and not yet
// drained; the caller answers 429 with Retry-After. The engine drains only as
// many as its waiting list has room for, so queued + waiting stays bounded.
//
// Fairness: jobs are queued per fairness key (KeyOf(job), e.g. the tenant)
// and drained round-robin across the keys with jobs, arrival order within a
// key: one key's burst cannot hold another key's single job behind all of
// it. With `max_per_key` set, push() also refuses (kKeyFull) a key that has
// that many queued, so no key takes the whole queue.
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
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/scheduler/scheduler.hpp"

namespace reprox::engine::sched {

enum class PushResult { kOk, kFull, kKeyFull, kClosed };

// Every job under one key: a plain FIFO.
struct NoFairnessKey {
  template <typename Job>
  std::string_view operator()(const Job&) const { return {}; }
};

template <typename Job, typename KeyOf = NoFairnessKey>
class RequestQueue {
 public:
  struct Drained {
    std::vector<std::pair<RequestId, Job>> jobs;  // round-robin across keys, arrival order within one
  };

  // `max_per_key` 0: a key may fill the whole queue.
  explicit RequestQueue(size_t capacity, size_t max_per_key = 0) : capacity_(capacity), max_per_key_(max_per_key) {}

  PushResult push(RequestId id, Job job) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return PushResult::kClosed;
      if (size_ >= capacity_) return PushResult::kFull;
      std::string key(KeyOf{}(job));
      auto& jobs = by_key_[key];
      if (max_per_key_ && jobs.size() >= max_per_key_) return PushResult::kKeyFull;
      if (jobs.empty()) rotation_.push_back(key);
      jobs.emplace_back(id, std::move(job));
      ++size_;
    }
    cv_.notify_one();
    return PushResult::kOk;
  }

  // Takes up to max_jobs queued jobs: one from each key in turn.
  Drained drain(size_t max_jobs) {
    Drained out;
    std::lock_guard lock(mutex_);
    while (out.jobs.size() < max_jobs && !rotation_.empty()) {
      std::string key = std::move(rotation_.front());
      rotation_.pop_front();
      auto it = by_key_.find(key);
      out.jobs.push_back(std::move(it->second.front()));
      it->second.pop_front();
      --size_;
      if (it->second.empty()) by_key_.erase(it);
      else rotation_.push_back(std::move(key));
    }
    return out;
  }

  // Blocks until a job or a cancellation is pending, the queue is closed, or
  // the timeout passes. True if there is something to drain.
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return closed_ || size_ != 0; });
    return size_ != 0;
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
    return size_;
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  const size_t max_per_key_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::deque<std::pair<RequestId, Job>>> by_key_;  // only keys with jobs
  std::deque<std::string> rotation_;  // the keys with jobs, next to drain first
  size_t size_ = 0;
  bool closed_ = false;
};

}  // namespace reprox::engine::sched
