// The Redis tier: a CacheStore shared by every reprox instance that points
// at one Redis.
//
// Threading: no call blocks its caller except clear() (at most the command
// timeout plus a small margin; use purge() on I/O threads). Commands run on
// the RedisExecutor's worker threads; get()'s callback runs on a worker or
// on the timer thread (when the deadline answers "miss" first). get_on()
// hands the raw reply to the caller's `post` and parses and decodes it
// there: building the entry on the thread that also frees it keeps the
// workers' malloc arenas from growing and being trimmed (madvise, page
// faults) on every batch, which cost more than the Redis round trip.
//
// Lookups on the I/O threads: after run_lookups_on(contexts), a get_on()
// called on the thread of one of those contexts goes out on that context's
// own Redis connection (RedisIoChannel) and is answered on the same thread,
// with no worker hand-off. It takes the executor's path instead while the
// channel is not ready, and while a put or erase of a key in the same slot
// (of `kWriteSlots`) is still in flight: that keeps "a get after a put sees
// the put", which the executor gets from running one key's jobs in order on
// one connection.
//
// Failing open: when Redis is slow, down or the breaker is open, get()
// answers a miss within `get_deadline` and put() skips the write; every such
// event is reported to `on_error(op)` (reprox_cache_store_errors_total
// {tier="redis", op}).
//
// Layout in Redis (prefix "reprox:v1:"):
//   <prefix><key>             entry: "<e_all>,<e_model>,<e_ns>,<len model>,<len ns>,
//                             <stored ms>,<ttl ms>;" model ns encode_generation(...);
//                             SET ... PX ttl
//   <prefix>epoch:all|model:<id>|ns:<name>   purge counters (INCR)
//   <prefix>epoch:seq         bumped by every purge (instances watch it to drop L1)
//   <prefix>lock:<key>        cross-instance single-flight (RedisFlightLock)
// An entry is served only while the three epochs it was written under are
// still current, so a purge on any instance takes effect for every lookup
// at once. The executor's lookups check inside Redis (one Lua script, one
// round trip); the I/O threads' lookups check against epochs they keep for
// the current epoch:seq (RedisIoLookup).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/cache/cache_store.hpp"
#include "proxy/cache/redis/redis_executor.hpp"

namespace boost::asio {
class io_context;
}

namespace reprox {

class RedisIoLookup;
struct RedisIoLookupResult;

struct RedisStoreOptions {
  RedisEndpoint endpoint;
  RedisTimeouts timeouts;  // the endpoint's URL parameters override these
  BreakerOptions breaker;
  size_t connections = 4;
  size_t queue_capacity = 256;  // per connection
  size_t max_batch = 32;
  std::chrono::milliseconds get_deadline{0};  // 0 = the command timeout
  std::chrono::seconds default_ttl{3600};
  std::chrono::milliseconds epoch_poll{100};  // how often epoch:seq is read
  std::string prefix = "reprox:v1:";
  std::string instance_id;  // empty = random; names lock owners
  std::function<void(const char* op)> on_error;  // get | put | erase | extend | clear | purge | lock | epoch
};

struct PurgeScope {
  enum class Kind { all, model, ns };
  Kind kind = Kind::all;
  std::string name;  // model id or namespace
};

struct RedisStoreStats {
  uint64_t hits = 0, misses = 0, errors = 0, stale = 0;
  uint64_t io_lookups = 0;  // lookups sent on an I/O thread's own connection
};

class RedisStore final : public CacheStore {
 public:
  // Never fails because Redis is down; throws only on bad options.
  explicit RedisStore(RedisStoreOptions options);
  // Closes the I/O-thread channels: their contexts must be running (the
  // close is posted and waited for, at most a second) or stopped.
  ~RedisStore() override;

  // Opens one Redis connection per context for the lookups made on that
  // context's thread (see the top of this file). Call once, before serving.
  void run_lookups_on(const std::vector<boost::asio::io_context*>& contexts);

  void get(const std::string& key, std::function<void(Lookup)> done) override;
  void put(const std::string& key, std::shared_ptr<const Generation> generation,
           std::chrono::seconds ttl) override;
  void erase(const std::string& key) override;
  // PEXPIRE key ms GT, queued behind the key's earlier writes; errors are
  // counted (op "extend") and otherwise ignored.
  void extend(const std::string& key, std::chrono::seconds ttl) override;
  // Bumps epoch:all after every earlier write has run; waits for it. Returns
  // 0: Redis does not count what the bump made unreachable.
  uint64_t clear() override;
  const char* tier() const override { return "redis"; }

  // Bumps the scope's epoch (and epoch:seq) after every earlier write has
  // run. `done(ok)` runs on a store thread. The old entries stop being served
  // at once on every instance; Redis reclaims them by TTL (or on their next
  // lookup).
  void purge(const PurgeScope& scope, std::function<void(bool ok)> done);

  // Like get(), also reporting the epoch:seq the answer was checked against
  // (0 when unknown): the tiered store fills L1 only if no purge came since.
  void get_checked(const std::string& key, std::function<void(Lookup, uint64_t seq)> done);
  // get_checked() whose reply is parsed and decoded inside `post` (see
  // CacheStore::get_on); an empty `post` parses on the store thread.
  void get_checked_on(const std::string& key, PostFn post, std::function<void(Lookup, uint64_t seq)> done);
  void get_on(const std::string& key, PostFn post, std::function<void(Lookup)> done) override;

  bool healthy() const { return executor_.breaker().state() == BreakerState::closed; }
  BreakerState state() const { return executor_.breaker().state(); }
  // Latest epoch:seq seen (0 = none yet); `listener` runs (on a store
  // thread) whenever it changes.
  uint64_t epoch_seq() const { return seq_.load(); }
  void set_epoch_listener(std::function<void(uint64_t seq)> listener);
  RedisStoreStats stats() const;

  // Building blocks for RedisFlightLock.
  const std::string& instance_id() const { return instance_id_; }
  std::string redis_key(const std::string& key) const { return options_.prefix + key; }
  std::string lock_key(const std::string& key) const { return options_.prefix + "lock:" + key; }
  RedisArgv get_command(const std::string& key) const;
  // One step of the background count (RedisTierCounter): SCAN `count` keys
  // from `cursor`; replies {next cursor, live entries, their bytes, stale
  // entries deleted}.
  RedisArgv count_command(const std::string& cursor, size_t count) const;
  // Turns the reply of get_command into a Lookup; `seq` gets epoch:seq.
  Lookup parse_get_reply(RedisValue& reply, uint64_t& seq);  // moves the entry out of `reply`
  size_t shard_of(const std::string& key) const { return std::hash<std::string>{}(key); }
  RedisExecutor& executor() { return executor_; }
  std::chrono::milliseconds get_deadline() const;

 private:
  using CheckedDone = std::function<void(Lookup, uint64_t seq)>;
  static constexpr size_t kWriteSlots = 1024;
  std::atomic<uint32_t>& writes_in_flight(size_t key_hash) { return writes_in_flight_[key_hash % kWriteSlots]; }
  bool get_on_io_thread(const std::string& key, size_t key_hash, const PostFn& post,
                        const std::shared_ptr<const CheckedDone>& done);
  void get_on_executor(const std::string& key, size_t key_hash, PostFn post, std::shared_ptr<const CheckedDone> done);
  void finish_from_script(RedisJobResult& r, const CheckedDone& done);
  void finish_from_io(RedisIoLookupResult& r, const CheckedDone& done);
  Lookup hit_from_entry(std::string value, int64_t expires_unix_ms);
  void count_error(const char* op);
  void observe_seq(uint64_t seq);
  void poll_epoch();
  void establish_epoch_seq();

  const RedisStoreOptions options_;
  const std::string instance_id_;
  std::atomic<uint64_t> seq_{0};
  std::mutex listener_mutex_;
  std::function<void(uint64_t)> listener_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, errors_{0}, stale_{0}, io_lookups_{0};
  std::array<std::atomic<uint32_t>, kWriteSlots> writes_in_flight_{};
  std::vector<std::unique_ptr<RedisIoLookup>> lookups_on_io_;  // one per context; set once, before serving
  size_t poll_shard_ = 0;  // timer thread only
  RedisExecutor executor_;  // last: its threads call back into the members above
};

// Builds the store's options from a --redis URL (load time; throws
// std::invalid_argument on a malformed URL).
RedisStoreOptions redis_store_options_from_url(const std::string& url);

}  // namespace reprox
