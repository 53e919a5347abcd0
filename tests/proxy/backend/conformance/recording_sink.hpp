// A GenerationSink that records every call, thread-safely, for tests; it
// also flags broken contract: overlapping calls and calls after the end.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "proxy/backend/backend.hpp"

namespace reprox::testing {

class RecordingSink : public GenerationSink {
 public:
  void on_event(GenEvent event) override {
    enter();
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) ++calls_after_end_;
    events_.push_back(std::move(event));
    ++calls_;
    leave();
  }
  void on_complete(const Usage& usage, const std::string& fingerprint) override {
    enter();
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) ++calls_after_end_;
    ended_ = true;
    ++completes_;
    ++calls_;
    usage_ = usage;
    fingerprint_ = fingerprint;
    leave();
  }
  void on_error(const api::ApiError& error) override {
    enter();
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) ++calls_after_end_;
    ended_ = true;
    ++errors_;
    ++calls_;
    error_ = error;
    leave();
  }

  // Waits for on_complete or on_error; false on timeout.
  bool wait_end(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ended_; });
  }
  bool wait_events(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return events_.size() >= n || ended_; }) &&
           events_.size() >= n;
  }

  std::vector<GenEvent> events() const { std::lock_guard<std::mutex> l(mu_); return events_; }
  std::string text(uint32_t choice) const {
    std::lock_guard<std::mutex> l(mu_);
    std::string out;
    for (const auto& e : events_) if (e.choice == choice) out += e.delta.content;
    return out;
  }
  // finish_reasons of `choice` in order (a well-formed stream has exactly one, last).
  std::vector<std::string> finish_reasons(uint32_t choice) const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const auto& e : events_) if (e.choice == choice && !e.finish_reason.empty()) out.push_back(e.finish_reason);
    return out;
  }
  bool last_event_finishes(uint32_t choice) const {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = events_.rbegin(); it != events_.rend(); ++it)
      if (it->choice == choice) return !it->finish_reason.empty();
    return false;
  }
  int calls() const { std::lock_guard<std::mutex> l(mu_); return calls_; }
  int completes() const { std::lock_guard<std::mutex> l(mu_); return completes_; }
  int errors() const { std::lock_guard<std::mutex> l(mu_); return errors_; }
  int calls_after_end() const { std::lock_guard<std::mutex> l(mu_); return calls_after_end_; }
  bool overlapped() const { return overlapped_.load(); }
  Usage usage() const { std::lock_guard<std::mutex> l(mu_); return usage_; }
  std::string fingerprint() const { std::lock_guard<std::mutex> l(mu_); return fingerprint_; }
  api::ApiError error() const { std::lock_guard<std::mutex> l(mu_); return error_; }

 private:
  void enter() { if (in_call_.exchange(true)) overlapped_ = true; }
  void leave() { in_call_ = false; cv_.notify_all(); }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> in_call_{false}, overlapped_{false};
  std::vector<GenEvent> events_;
  int calls_ = 0, completes_ = 0, errors_ = 0, calls_after_end_ = 0;
  bool ended_ = false;
  Usage usage_;
  std::string fingerprint_;
  api::ApiError error_;
};

}  // namespace reprox::testing
