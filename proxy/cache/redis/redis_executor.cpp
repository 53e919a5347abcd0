#include "proxy/cache/redis/redis_executor.hpp"

#include <pthread.h>

#include <algorithm>

namespace reprox {

RedisExecutor::RedisExecutor(RedisExecutorOptions options, ErrorFn on_error)
    : options_(std::move(options)), on_error_(std::move(on_error)), breaker_(options_.breaker) {
  size_t n = std::max<size_t>(1, options_.connections);
  for (size_t i = 0; i < n; ++i) {
    auto shard = std::make_unique<Shard>();
    shard->connection = std::make_unique<RedisConnection>(options_.endpoint, options_.timeouts, options_.scripts);
    shards_.push_back(std::move(shard));
  }
  for (auto& shard : shards_)
    shard->thread = std::thread([this, s = shard.get()] {
      pthread_setname_np(pthread_self(), "redis-worker");
      run_shard(*s);
    });
  timer_.schedule_after(std::chrono::milliseconds(0), [this] { tick(); });
  timer_.schedule_after(options_.deadline_sweep, [this] { sweep(); });
}

RedisExecutor::~RedisExecutor() { stop(); }

void RedisExecutor::stop() {
  if (stopping_.exchange(true)) return;
  timer_.stop();
  for (auto& shard : shards_) {
    { std::lock_guard lock(shard->mutex); }
    shard->cv.notify_all();
  }
  for (auto& shard : shards_)
    if (shard->thread.joinable()) shard->thread.join();
}

void RedisExecutor::fail(RedisJob& job, const std::string& error) {
  if (job.finished.exchange(true)) return;
  if (job.op[0] != '\0' && on_error_) on_error_(job.op);
  RedisJobResult result;
  result.error = error;
  if (job.done) job.done(result);
}

void RedisExecutor::complete(RedisJob& job, RedisJobResult& result) {
  if (job.finished.exchange(true)) return;
  if (job.done) job.done(result);
}

bool RedisExecutor::submit(size_t shard_hash, std::shared_ptr<RedisJob> job,
                           std::optional<TimerQueue::Clock::time_point> deadline) {
  if (stopping_) {
    fail(*job, "store stopped");
    return false;
  }
  if (!job->probe && !breaker_.allow()) {
    fail(*job, "circuit open");
    return false;
  }
  Shard& shard = *shards_[shard_hash % shards_.size()];
  job->deadline = deadline;
  bool queued = false;
  {
    std::lock_guard lock(shard.mutex);
    if (job->probe) {
      shard.queue.push_front(job);  // probes are never refused
      queued = true;
    } else if (shard.queue.size() < options_.queue_capacity) {
      shard.queue.push_back(job);
      queued = true;
    }
  }
  if (!queued) {
    fail(*job, "queue full");
    return false;
  }
  shard.cv.notify_one();
  return true;
}

void RedisExecutor::submit_after_all(std::shared_ptr<RedisJob> job, TimerQueue::Clock::time_point deadline) {
  auto remaining = std::make_shared<std::atomic<size_t>>(shards_.size());
  auto failed = std::make_shared<std::atomic<bool>>(false);
  timer_.schedule_at(deadline, [this, job] { fail(*job, "timeout"); });
  for (size_t i = 0; i < shards_.size(); ++i) {
    auto part = std::make_shared<RedisJob>();  // no commands: done once the shard reaches it
    part->probe = job->probe;
    part->done = [this, i, job, remaining, failed](RedisJobResult& r) {
      if (!r.ok) failed->store(true);
      if (remaining->fetch_sub(1) != 1) return;
      if (failed->load())
        fail(*job, "barrier failed: " + r.error);
      else
        submit(i, job);
    };
    submit(i, part);
  }
}

void RedisExecutor::run_shard(Shard& shard) {
  std::vector<std::shared_ptr<RedisJob>> batch;
  for (;;) {
    {
      std::unique_lock lock(shard.mutex);
      shard.cv.wait(lock, [&] { return stopping_ || !shard.queue.empty(); });
      if (stopping_) break;
      while (!shard.queue.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(shard.queue.front()));
        shard.queue.pop_front();
      }
      shard.in_flight = batch;
    }
    execute(shard, batch);
    batch.clear();
    std::lock_guard lock(shard.mutex);
    shard.in_flight.clear();
  }
  std::deque<std::shared_ptr<RedisJob>> left;
  {
    std::lock_guard lock(shard.mutex);
    left.swap(shard.queue);
  }
  for (auto& job : left) fail(*job, "store stopped");
  shard.connection->close();
}

void RedisExecutor::execute(Shard& shard, std::vector<std::shared_ptr<RedisJob>>& batch) {
  // Jobs whose deadline already answered them are not sent.
  batch.erase(std::remove_if(batch.begin(), batch.end(), [](const auto& j) { return j->finished.load(); }),
              batch.end());
  if (batch.empty()) return;
  bool probe = std::any_of(batch.begin(), batch.end(), [](const auto& j) { return j->probe; });
  auto fail_all = [&](const std::string& error) {
    for (auto& job : batch) fail(*job, error);
  };
  if (!probe && !breaker_.allow()) return fail_all("circuit open");

  std::vector<RedisArgv> commands;
  for (auto& job : batch) commands.insert(commands.end(), job->commands.begin(), job->commands.end());
  std::vector<RedisValue> replies;
  std::string error;
  bool ok = false;
  // A probe may find a context that died while the breaker was open: it
  // gets one fresh connection before it counts as a failure.
  for (int attempt = 0; attempt < (probe ? 2 : 1) && !ok; ++attempt) {
    bool reused = shard.connection->connected();
    if (!reused && !shard.connection->connect(error)) break;
    if (commands.empty()) {
      ok = true;
      break;
    }
    ok = shard.connection->run(commands, replies, error);
    if (!reused) break;
  }
  if (!ok) {
    breaker_.on_failure();
    return fail_all(error);
  }
  breaker_.on_success();
  size_t next = 0;
  for (auto& job : batch) {
    RedisJobResult result;
    result.ok = true;
    auto first = replies.begin() + long(next);
    result.replies.assign(std::make_move_iterator(first), std::make_move_iterator(first + long(job->commands.size())));
    next += job->commands.size();
    complete(*job, result);
  }
}

void RedisExecutor::sweep() {
  if (stopping_) return;
  auto now = std::chrono::steady_clock::now();
  auto expired = [now](const std::shared_ptr<RedisJob>& j) {
    return j->deadline && *j->deadline <= now && !j->finished.load();
  };
  std::vector<std::shared_ptr<RedisJob>> late;
  for (auto& shard : shards_) {
    std::lock_guard lock(shard->mutex);
    for (auto& j : shard->in_flight)
      if (expired(j)) late.push_back(j);
    // Queued ones also give their slot back.
    auto& q = shard->queue;
    auto keep = std::stable_partition(q.begin(), q.end(), [&](const auto& j) { return !expired(j); });
    late.insert(late.end(), std::make_move_iterator(keep), std::make_move_iterator(q.end()));
    q.erase(keep, q.end());
  }
  for (auto& j : late) fail(*j, "timeout");
  timer_.schedule_after(options_.deadline_sweep, [this] { sweep(); });
}

void RedisExecutor::tick() {
  if (stopping_) return;
  if (breaker_.try_probe()) {
    auto job = std::make_shared<RedisJob>();
    job->op = "";
    job->probe = true;
    job->commands.push_back({"PING"});
    submit(0, job);
  }
  timer_.schedule_after(std::chrono::milliseconds(20), [this] { tick(); });
}

}  // namespace reprox
