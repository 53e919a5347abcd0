#include "proxy/cache/redis/redis_flight_lock.hpp"

namespace reprox {

namespace {

constexpr const char* kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua";

}  // namespace

const char* to_string(FlightLockOutcome outcome) {
  switch (outcome) {
    case FlightLockOutcome::leader: return "leader";
    case FlightLockOutcome::hit: return "hit";
    case FlightLockOutcome::generate: return "generate";
  }
  return "unknown";
}

struct RedisFlightLock::Wait {
  std::string key;
  std::function<void(FlightLockResult)> done;
  TimerQueue::Clock::time_point deadline;
};

void RedisFlightLock::acquire(const std::string& key, std::function<void(FlightLockResult)> done) {
  auto wait = std::make_shared<Wait>();
  wait->key = key;
  wait->done = std::move(done);
  wait->deadline = TimerQueue::Clock::now() + options_.max_wait;
  try_lock(std::move(wait));
}

void RedisFlightLock::try_lock(std::shared_ptr<Wait> wait) {
  // SET NX, then a lookup on the same connection: a lock taken after the
  // previous leader released it finds that leader's entry (it stored before
  // releasing), so a finished generation is never repeated.
  auto job = std::make_shared<RedisJob>();
  job->op = "lock";
  job->commands.push_back({"SET", store_.lock_key(wait->key), store_.instance_id(), "NX", "PX",
                           std::to_string(options_.lock_ttl.count())});
  job->commands.push_back(store_.get_command(wait->key));
  job->done = [this, wait](RedisJobResult& r) {
    if (!r.ok || r.replies[0].is_error()) return wait->done(FlightLockResult{});
    bool locked = r.replies[0].type == RedisValue::Type::status;
    uint64_t seq = 0;
    Lookup lookup = store_.parse_get_reply(r.replies[1], seq);
    if (lookup.status == LookupStatus::hit) {
      if (locked) release(wait->key);
      return wait->done(FlightLockResult{FlightLockOutcome::hit, std::move(lookup)});
    }
    if (locked) return wait->done(FlightLockResult{FlightLockOutcome::leader, {}});
    schedule_poll(wait);
  };
  store_.executor().submit(store_.shard_of(wait->key), job, TimerQueue::Clock::now() + store_.get_deadline());
}

void RedisFlightLock::schedule_poll(std::shared_ptr<Wait> wait) {
  auto now = TimerQueue::Clock::now();
  if (now >= wait->deadline) return wait->done(FlightLockResult{});
  auto at = std::min(now + options_.poll_interval, wait->deadline);
  store_.executor().timer().schedule_at(at, [this, wait] { poll(wait); });
}

void RedisFlightLock::poll(std::shared_ptr<Wait> wait) {
  auto job = std::make_shared<RedisJob>();
  job->op = "lock";
  job->commands.push_back(store_.get_command(wait->key));
  job->commands.push_back({"EXISTS", store_.lock_key(wait->key)});
  job->done = [this, wait](RedisJobResult& r) {
    if (!r.ok) return wait->done(FlightLockResult{});
    uint64_t seq = 0;
    Lookup lookup = store_.parse_get_reply(r.replies[0], seq);
    if (lookup.status == LookupStatus::hit) return wait->done(FlightLockResult{FlightLockOutcome::hit, std::move(lookup)});
    if (TimerQueue::Clock::now() >= wait->deadline) return wait->done(FlightLockResult{});
    if (r.replies[1].type == RedisValue::Type::integer && r.replies[1].integer == 0) return try_lock(wait);
    schedule_poll(wait);
  };
  store_.executor().submit(store_.shard_of(wait->key), job, TimerQueue::Clock::now() + store_.get_deadline());
}

void RedisFlightLock::release(const std::string& key) {
  auto job = std::make_shared<RedisJob>();
  job->op = "lock";
  job->commands.push_back({"EVAL", kReleaseScript, "1", store_.lock_key(key), store_.instance_id()});
  store_.executor().submit(store_.shard_of(key), job);
}

}  // namespace reprox
