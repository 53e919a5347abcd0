#include "proxy/cache/redis/redis_counter.hpp"

#include <charconv>

namespace reprox {

struct RedisTierCounter::State : std::enable_shared_from_this<State> {
  RedisStore& store;
  const RedisCounterOptions options;
  std::atomic<bool> stopped{false};
  std::atomic<uint64_t> entries{0}, bytes{0}, reclaimed{0}, passes{0};
  // The pass in progress: touched only by its one step in flight.
  std::string cursor = "0";
  uint64_t pass_entries = 0, pass_bytes = 0;

  State(RedisStore& s, RedisCounterOptions o) : store(s), options(o) {}

  void schedule(std::chrono::milliseconds delay) {
    if (stopped) return;
    auto self = shared_from_this();
    store.executor().timer().schedule_after(delay, [self] { self->step(); });
  }

  void restart_later() {
    cursor = "0";
    pass_entries = pass_bytes = 0;
    schedule(options.interval);
  }

  void step() {
    if (stopped) return;
    if (!store.executor().breaker().allow()) return restart_later();  // Redis down: keep the last count
    auto job = std::make_shared<RedisJob>();
    job->op = "count";
    job->commands.push_back(store.count_command(cursor, options.step_keys));
    auto self = shared_from_this();
    job->done = [self](RedisJobResult& r) { self->on_reply(r); };
    auto t = store.executor().options().timeouts;
    store.executor().submit(std::hash<std::string>{}(cursor), job, TimerQueue::Clock::now() + t.command * 2);
  }

  static bool number(const RedisValue& v, uint64_t& out) {
    if (v.type == RedisValue::Type::integer) {
      out = uint64_t(v.integer);
      return v.integer >= 0;
    }
    if (v.type != RedisValue::Type::string) return false;
    auto [p, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), out);
    return ec == std::errc() && p == v.str.data() + v.str.size();
  }

  void on_reply(RedisJobResult& r) {
    if (stopped) return;
    uint64_t next = 0, n = 0, b = 0, gone = 0;
    const auto* reply = r.ok ? &r.replies[0] : nullptr;
    if (!reply || reply->type != RedisValue::Type::array || reply->elements.size() != 4 ||
        !number(reply->elements[0], next) || !number(reply->elements[1], n) || !number(reply->elements[2], b) ||
        !number(reply->elements[3], gone))
      return restart_later();  // failed or unexpected: the last complete count stays
    pass_entries += n;
    pass_bytes += b;
    reclaimed += gone;
    if (next != 0) {
      cursor = std::to_string(next);
      return schedule(options.step_gap);
    }
    entries = pass_entries;
    bytes = pass_bytes;
    ++passes;
    restart_later();
  }
};

RedisTierCounter::RedisTierCounter(RedisStore& store, RedisCounterOptions options)
    : state_(std::make_shared<State>(store, options)) {
  if (options.interval.count() > 0) state_->schedule(std::chrono::milliseconds(0));
}

RedisTierCounter::~RedisTierCounter() { state_->stopped = true; }

RedisTierCount RedisTierCounter::snapshot() const {
  return RedisTierCount{state_->entries.load(), state_->bytes.load(), state_->reclaimed.load(), state_->passes.load()};
}

}  // namespace reprox
