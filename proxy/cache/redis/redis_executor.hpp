// Runs Redis commands for the Redis tier without ever blocking the caller.
//
// A fixed set of shards, each one worker thread that owns one blocking
// RedisConnection and a bounded FIFO queue. A job (one or more pipelined
// commands) goes to the shard its key hashes to, so the jobs of one key run
// in submission order on one connection (a put is seen by a later get).
// A worker takes up to `max_batch` queued jobs and pipelines them in one
// round trip.
//
// Failing fast: submit() fails a job at once (on the caller's thread) when
// the breaker is open or its shard's queue is full. A job with a deadline
// is failed by the timer thread's periodic sweep (every `deadline_sweep`)
// when the deadline passes first, queued or in flight; no timer entry per
// job, so a busy store does not wake the timer thread per command. Every job's
// callback runs exactly once: on a worker, the timer thread or the caller.
// Every failure is reported to `on_error(op)` before the callback runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proxy/cache/redis/redis_breaker.hpp"
#include "proxy/cache/redis/redis_connection.hpp"
#include "proxy/cache/redis/redis_timer.hpp"

namespace reprox {

struct RedisExecutorOptions {
  RedisEndpoint endpoint;
  RedisTimeouts timeouts;
  BreakerOptions breaker;
  size_t connections = 4;       // shards = worker threads = connections
  size_t queue_capacity = 256;  // per shard
  size_t max_batch = 32;        // jobs pipelined per round trip
  // How often the timer thread fails jobs whose deadline has passed (a job
  // answers at most this much after its deadline).
  std::chrono::milliseconds deadline_sweep{5};
  // Scripts the jobs call by EVALSHA (NOSCRIPT falls back to EVAL).
  std::shared_ptr<const std::vector<RedisScript>> scripts;
};

struct RedisJobResult {
  bool ok = false;
  std::string error;               // when !ok
  std::vector<RedisValue> replies;  // one per command when ok
};

struct RedisJob {
  const char* op = "";  // metrics label: get | put | erase | clear | purge | lock | epoch | probe
  std::vector<RedisArgv> commands;
  std::function<void(RedisJobResult&)> done;  // may be empty
  bool probe = false;                         // runs while the breaker is open (half-open probe)
  std::atomic<bool> finished{false};
  // Set by submit(): failed with "timeout" by the deadline sweep.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class RedisExecutor {
 public:
  using ErrorFn = std::function<void(const char* op)>;
  RedisExecutor(RedisExecutorOptions options, ErrorFn on_error);
  ~RedisExecutor();  // fails queued jobs, joins the workers
  RedisExecutor(const RedisExecutor&) = delete;
  RedisExecutor& operator=(const RedisExecutor&) = delete;

  // Returns false when the job was failed at once (its callback already ran).
  bool submit(size_t shard_hash, std::shared_ptr<RedisJob> job,
              std::optional<TimerQueue::Clock::time_point> deadline = std::nullopt);
  // Runs `job` once, after every job submitted before it on any shard has
  // run (a barrier through all shards): clear and purge use it so that
  // earlier puts cannot land after them.
  void submit_after_all(std::shared_ptr<RedisJob> job, TimerQueue::Clock::time_point deadline);

  TimerQueue& timer() { return timer_; }
  const CircuitBreaker& breaker() const { return breaker_; }
  // The store's I/O-thread channels report to the same breaker.
  CircuitBreaker& breaker_mut() { return breaker_; }
  const RedisExecutorOptions& options() const { return options_; }
  size_t shards() const { return shards_.size(); }
  void stop();

 private:
  struct Shard {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::shared_ptr<RedisJob>> queue;
    std::vector<std::shared_ptr<RedisJob>> in_flight;  // the batch being executed
    std::unique_ptr<RedisConnection> connection;
    std::thread thread;
  };
  void run_shard(Shard& shard);
  void execute(Shard& shard, std::vector<std::shared_ptr<RedisJob>>& batch);
  void fail(RedisJob& job, const std::string& error);
  void complete(RedisJob& job, RedisJobResult& result);
  void tick();   // starts half-open probes
  void sweep();  // fails jobs past their deadline

  const RedisExecutorOptions options_;
  const ErrorFn on_error_;
  CircuitBreaker breaker_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> stopping_{false};
  TimerQueue timer_;  // last member: its thread starts after the rest exists
};

}  // namespace reprox
