// Cache lookups on one I/O thread's RedisIoChannel, checked against purge
// epochs that the thread keeps: one plain MGET per hit instead of the Lua
// script the executor's path runs (which costs Redis several times a GET).
//
// Why a kept epoch is safe to compare against: a purge bumps its scope's
// epoch and epoch:seq in one script, and epoch:seq never takes a value
// twice (INCR; when the key is gone, whoever recreates it starts from the
// clock in microseconds, see RedisStore). So epochs read together with
// epoch:seq = S are the current epochs whenever epoch:seq reads S again.
// A lookup reads epoch:seq and the entry in one MGET; when the thread has
// the entry's (model, namespace) epochs for that seq it decides alone,
// otherwise a second MGET fetches them with epoch:seq again. Whatever this
// cannot decide for sure (epoch:seq missing, or moved between the two
// reads) is answered `fallback`: the caller asks the Lua script.
//
// Unlike the script, a lookup never deletes a stale entry (a blind DEL
// could race a fresh write of the key); TTL and the background count's SCAN
// reclaim those.
//
// Threading: the channel's thread only (as RedisIoChannel).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proxy/cache/redis/redis_io_channel.hpp"

namespace reprox {

// The header the put script writes in front of an entry:
// "<e_all>,<e_model>,<e_ns>,<len model>,<len ns>,<stored ms>,<ttl ms>;" model ns blob
struct EntryHeader {
  uint64_t epoch_all = 0, epoch_model = 0, epoch_ns = 0;
  std::string_view model, ns, blob;
  int64_t stored_ms = 0, ttl_ms = 0;
};
bool parse_entry_header(std::string_view value, EntryHeader& out);

bool parse_u64(std::string_view s, uint64_t& out);

// A value for epoch:seq when it has to be created: the clock in
// microseconds, above any value an earlier incarnation of the key reached
// (unless that saw more than one purge per microsecond of its life).
std::string fresh_epoch_seq();

struct RedisIoLookupResult {
  enum class Outcome { hit, miss, stale, failed, fallback };
  Outcome outcome = Outcome::failed;
  uint64_t seq = 0;   // epoch:seq the answer was checked against (hit, miss, stale)
  std::string value;  // the whole entry (hit)
  int64_t expires_unix_ms = 0;  // hit: stored time + TTL from its header (0: header unreadable)
  std::string error;  // failed
};

class RedisIoLookup {
 public:
  using Clock = RedisIoChannel::Clock;
  using Result = RedisIoLookupResult;
  using Outcome = RedisIoLookupResult::Outcome;
  using Done = std::function<void(Result&)>;

  RedisIoLookup(std::shared_ptr<RedisIoChannel> channel, std::string prefix, size_t max_epochs = 4096);

  // The channel's set-up for lookups: creates epoch:seq when it is missing.
  static std::vector<RedisArgv> setup_commands(const std::string& prefix);

  RedisIoChannel& channel() { return *channel_; }
  const std::shared_ptr<RedisIoChannel>& channel_ptr() const { return channel_; }
  // As RedisIoChannel::try_ready(); lookup() requires it just before.
  bool try_ready() { return channel_->try_ready(); }
  // `key` is the cache key (the prefix is added here). `done` runs once, on
  // this thread, never inside lookup().
  void lookup(std::string_view key, Clock::time_point deadline, Done done);

 private:
  struct Epochs {
    uint64_t seq = 0, all = 0, model = 0, ns = 0;
  };
  // What a decision needs from an entry's header, kept past the moves of
  // the entry's bytes (the header's views point into them).
  struct Stamp {
    uint64_t all = 0, model = 0, ns = 0;
    int64_t expires_unix_ms = 0;
  };
  static Stamp stamp_of(const EntryHeader& h);
  void decide(const Epochs& e, uint64_t seq, std::string value, const Stamp& stamp, Done& done);
  // Sends `command` (MGET epoch:seq and the entry's three epochs) and
  // decides once they are in.
  void fetch_epochs(uint64_t seq, std::string value, std::string names, const Stamp& stamp, const RedisArgv& command,
                    Clock::time_point deadline, Done done);

  std::shared_ptr<RedisIoChannel> channel_;
  const std::string prefix_;
  const std::string seq_key_;  // prefix_ + "epoch:seq"
  std::string entry_key_;      // the last lookup's full key: reused, not reallocated
  const size_t max_epochs_;
  std::unordered_map<std::string, Epochs> epochs_;  // by model + '\0' + ns
};

}  // namespace reprox
