#include "proxy/cache/redis/redis_store.hpp"

#include <future>
#include <random>
#include <stdexcept>

#include <boost/asio/post.hpp>

#include "proxy/cache/redis/checked_entry_memo.hpp"
#include "proxy/cache/entry_codec.hpp"
#include "proxy/cache/redis/redis_io_lookup.hpp"
#include "proxy/cache/redis/redis_script.hpp"

namespace reprox {

namespace net = boost::asio;

namespace {

// KEYS[1] entry; ARGV[1] prefix. Replies {seq} (miss), {seq, 0} (stale:
// written under an epoch that a purge has since bumped; deleted), or
// {seq, value, pttl} (hit).
constexpr const char* kGetScript = R"lua(
local p = ARGV[1]
local seq = redis.call('GET', p .. 'epoch:seq') or '0'
local v = redis.call('GET', KEYS[1])
if not v then return {seq} end
local ea, em, en, ml, nl, h = string.match(v, '^(%d+),(%d+),(%d+),(%d+),(%d+),%d+,%d+;()')
if not ea then return {seq, v, redis.call('PTTL', KEYS[1])} end
ml = tonumber(ml)
nl = tonumber(nl)
local model = string.sub(v, h, h + ml - 1)
local ns = string.sub(v, h + ml, h + ml + nl - 1)
local cur = redis.call('MGET', p .. 'epoch:all', p .. 'epoch:model:' .. model, p .. 'epoch:ns:' .. ns)
if (cur[1] or '0') ~= ea or (cur[2] or '0') ~= em or (cur[3] or '0') ~= en then
  redis.call('DEL', KEYS[1])
  return {seq, 0}
end
return {seq, v, redis.call('PTTL', KEYS[1])}
)lua";

// KEYS[1] entry; ARGV: prefix, model, ns, stored ms, ttl ms, encoded
// generation. Stamps the entry with the epochs current at write time.
constexpr const char* kPutScript = R"lua(
local p = ARGV[1]
local cur = redis.call('MGET', p .. 'epoch:all', p .. 'epoch:model:' .. ARGV[2], p .. 'epoch:ns:' .. ARGV[3])
local h = (cur[1] or '0') .. ',' .. (cur[2] or '0') .. ',' .. (cur[3] or '0') .. ',' .. #ARGV[2] .. ',' ..
          #ARGV[3] .. ',' .. ARGV[4] .. ',' .. ARGV[5] .. ';'
redis.call('SET', KEYS[1], h .. ARGV[2] .. ARGV[3] .. ARGV[6], 'PX', ARGV[5])
return 1
)lua";

// KEYS[1] the scope's epoch; ARGV[1] prefix, ARGV[2] a fresh epoch:seq (see
// fresh_epoch_seq) in case the key is gone. Returns the new epoch:seq.
constexpr const char* kPurgeScript = R"lua(
redis.call('INCR', KEYS[1])
redis.call('SET', ARGV[1] .. 'epoch:seq', ARGV[2], 'NX')
return redis.call('INCR', ARGV[1] .. 'epoch:seq')
)lua";

// ARGV: prefix, cursor, count. One SCAN step over the prefix: counts the
// live entries and their bytes, deletes the ones a purge made stale (as a
// lookup would). Replies {next cursor, entries, bytes, reclaimed}.
constexpr const char* kCountScript = R"lua(
local p = ARGV[1]
local r = redis.call('SCAN', ARGV[2], 'MATCH', p .. '*', 'COUNT', ARGV[3])
local all = redis.call('GET', p .. 'epoch:all') or '0'
local n, bytes, reclaimed = 0, 0, 0
for _, k in ipairs(r[2]) do
  local rest = string.sub(k, #p + 1)
  if string.sub(rest, 1, 6) ~= 'epoch:' and string.sub(rest, 1, 5) ~= 'lock:' and redis.call('TYPE', k).ok == 'string' then
    -- Only the header and the names are read, never a whole (maybe large) value.
    local len = redis.call('STRLEN', k)
    if len > 0 then
      local live = true
      local head = redis.call('GETRANGE', k, 0, 255)
      local ea, em, en, ml, nl, h = string.match(head, '^(%d+),(%d+),(%d+),(%d+),(%d+),%d+,%d+;()')
      if ea then
        ml = tonumber(ml)
        nl = tonumber(nl)
        local names = redis.call('GETRANGE', k, h - 1, h + ml + nl - 2)
        local model = string.sub(names, 1, ml)
        local ns = string.sub(names, ml + 1, ml + nl)
        local cur = redis.call('MGET', p .. 'epoch:model:' .. model, p .. 'epoch:ns:' .. ns)
        live = all == ea and (cur[1] or '0') == em and (cur[2] or '0') == en
      end
      if live then
        n = n + 1
        bytes = bytes + len
      else
        redis.call('DEL', k)
        reclaimed = reclaimed + 1
      end
    end
  end
end
return {r[1], n, bytes, reclaimed}
)lua";

// The scripts, hashed once; the store calls them by EVALSHA.
const std::shared_ptr<const std::vector<RedisScript>>& store_scripts() {
  static const auto scripts = std::make_shared<const std::vector<RedisScript>>(
      std::vector<RedisScript>{make_redis_script(kGetScript), make_redis_script(kPutScript),
                               make_redis_script(kPurgeScript), make_redis_script(kCountScript)});
  return scripts;
}
const std::string& get_sha() { return (*store_scripts())[0].sha; }
const std::string& put_sha() { return (*store_scripts())[1].sha; }
const std::string& purge_sha() { return (*store_scripts())[2].sha; }
const std::string& count_sha() { return (*store_scripts())[3].sha; }

uint64_t seq_of(const RedisValue& v) {
  uint64_t seq = 0;
  if (v.type == RedisValue::Type::integer) return uint64_t(v.integer);
  if (v.type == RedisValue::Type::string) parse_u64(v.str, seq);
  return seq;
}

// Splits "<7 comma-separated numbers>;" model ns blob and opens (checks)
// the blob, which must be a complete generation of that model and ns.
bool open_entry(std::string_view v, int64_t& stored_ms, EncodedGeneration& gen) {
  EntryHeader h;
  if (!parse_entry_header(v, h)) return false;
  stored_ms = h.stored_ms;
  if (gen.open(h.blob) != CodecError::none) return false;
  return gen.model() == h.model && gen.ns() == h.ns && gen.complete();
}

std::string random_instance_id() {
  std::random_device rd;
  std::mt19937_64 rng((uint64_t(rd()) << 32) ^ rd());
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 16; ++i) id.push_back(hex[rng() & 15]);
  return id;
}

RedisExecutorOptions executor_options(const RedisStoreOptions& o) {
  RedisExecutorOptions e;
  e.endpoint = o.endpoint;
  e.timeouts = o.timeouts;
  if (o.endpoint.connect_timeout_ms >= 0) e.timeouts.connect = std::chrono::milliseconds(o.endpoint.connect_timeout_ms);
  if (o.endpoint.command_timeout_ms >= 0) e.timeouts.command = std::chrono::milliseconds(o.endpoint.command_timeout_ms);
  e.breaker = o.breaker;
  e.connections = o.connections;
  e.queue_capacity = o.queue_capacity;
  e.max_batch = o.max_batch;
  e.scripts = store_scripts();
  return e;
}

}  // namespace

RedisStoreOptions redis_store_options_from_url(const std::string& url) {
  std::string error;
  auto ep = parse_redis_url(url, &error);
  if (!ep) throw std::invalid_argument("--redis: " + error);
  RedisStoreOptions o;
  o.endpoint = *ep;
  return o;
}

RedisStore::RedisStore(RedisStoreOptions options)
    : options_(std::move(options)),
      instance_id_(options_.instance_id.empty() ? random_instance_id() : options_.instance_id),
      executor_(executor_options(options_), [this](const char* op) { count_error(op); }) {
  if (options_.prefix.empty()) throw std::invalid_argument("redis store: empty key prefix");
  establish_epoch_seq();
  executor_.timer().schedule_after(options_.epoch_poll, [this] { poll_epoch(); });
}

// Creates epoch:seq if it is missing (as the I/O channels' set-up and the
// purge script would) and learns it before the store takes any put. Without
// this, the first value the store saw would come from a later poll, after
// puts had filled L1, and the 0 -> seq change would clear L1 for no purge.
// Waits at most the connect plus command timeouts; with Redis down the seq
// stays unknown (0) and the first one seen later clears L1, as it must.
void RedisStore::establish_epoch_seq() {
  auto job = std::make_shared<RedisJob>();
  job->op = "epoch";
  const std::string seq_key = options_.prefix + "epoch:seq";
  job->commands.push_back({"SET", seq_key, fresh_epoch_seq(), "NX"});
  job->commands.push_back({"GET", seq_key});
  auto learned = std::make_shared<std::promise<void>>();
  auto done = learned->get_future();
  job->done = [this, learned](RedisJobResult& r) {
    // No listener is set yet unless this answer comes after the wait.
    if (r.ok && r.replies.size() == 2) observe_seq(seq_of(r.replies[1]));
    learned->set_value();
  };
  const auto& t = executor_.options().timeouts;
  auto bound = t.connect + t.command;
  executor_.submit(0, job, TimerQueue::Clock::now() + bound);
  done.wait_for(bound + std::chrono::milliseconds(50));
}

RedisStore::~RedisStore() {
  for (auto& lookup : lookups_on_io_) {
    auto channel = lookup->channel_ptr();
    auto& io = channel->context();
    if (io.stopped() || io.get_executor().running_in_this_thread()) {
      channel->close();
      continue;
    }
    auto closed = std::make_shared<std::promise<void>>();
    auto done = closed->get_future();
    net::post(io, [channel, closed] {
      channel->close();
      closed->set_value();
    });
    done.wait_for(std::chrono::seconds(1));
  }
  executor_.stop();
}

void RedisStore::run_lookups_on(const std::vector<net::io_context*>& contexts) {
  const RedisExecutorOptions& e = executor_.options();
  RedisIoChannelOptions o;
  o.endpoint = e.endpoint;
  o.timeouts = e.timeouts;
  o.setup = RedisIoLookup::setup_commands(options_.prefix);
  o.max_pending = std::max<size_t>(1, e.queue_capacity * e.connections);
  for (auto* io : contexts)
    lookups_on_io_.push_back(
        std::make_unique<RedisIoLookup>(RedisIoChannel::create(*io, o, executor_.breaker_mut()), options_.prefix));
}

std::chrono::milliseconds RedisStore::get_deadline() const {
  return options_.get_deadline.count() > 0 ? options_.get_deadline : executor_.options().timeouts.command;
}

void RedisStore::count_error(const char* op) {
  ++errors_;
  if (options_.on_error) options_.on_error(op);
}

RedisArgv RedisStore::get_command(const std::string& key) const {
  return {"EVALSHA", get_sha(), "1", redis_key(key), options_.prefix};
}

RedisArgv RedisStore::count_command(const std::string& cursor, size_t count) const {
  return {"EVALSHA", count_sha(), "0", options_.prefix, cursor, std::to_string(count)};
}

Lookup RedisStore::parse_get_reply(RedisValue& reply, uint64_t& seq) {
  seq = 0;
  if (reply.type != RedisValue::Type::array || reply.elements.empty()) {
    count_error("get");
    return {LookupStatus::error, {}};
  }
  seq = seq_of(reply.elements[0]);
  observe_seq(seq);
  if (reply.elements.size() == 2) ++stale_;
  if (reply.elements.size() != 3 || reply.elements[1].type != RedisValue::Type::string) {
    ++misses_;
    return {};
  }
  long long pttl = reply.elements[2].integer;
  return hit_from_entry(std::move(reply.elements[1].str), pttl > 0 ? now_unix_ms() + pttl : 0);
}

// Checks the entry through but leaves it encoded: the hit's generation is
// decoded only if the caller asks for it (StoredGeneration).
// Bytes equal to an entry this thread checked before reuse that check (see
// CheckedEntryMemo).
Lookup RedisStore::hit_from_entry(std::string value, int64_t expires_unix_ms) {
  thread_local CheckedEntryMemo memo;
  CheckedEntryMemo::Checked checked;
  if (const auto* known = memo.find(value)) {
    checked = *known;
  } else {
    checked.bytes = std::make_shared<const std::string>(std::move(value));
    if (!open_entry(*checked.bytes, checked.stored_unix_ms, checked.generation)) {
      count_error("decode");
      return {LookupStatus::error, {}};
    }
    memo.remember(checked);
  }
  ++hits_;
  Lookup out{LookupStatus::hit, {}};
  out.entry.generation = StoredGeneration(std::move(checked.bytes), checked.generation);
  out.entry.stored_unix_ms = checked.stored_unix_ms;
  out.entry.expires_unix_ms = expires_unix_ms;
  out.entry.tier = tier();
  return out;
}

void RedisStore::finish_from_script(RedisJobResult& r, const CheckedDone& done) {
  if (!r.ok) {
    ++misses_;
    return done(Lookup{LookupStatus::miss, {}}, 0);
  }
  uint64_t seq = 0;
  Lookup lookup = parse_get_reply(r.replies[0], seq);
  if (lookup.status == LookupStatus::error) lookup.status = LookupStatus::miss;
  done(std::move(lookup), seq);
}

void RedisStore::finish_from_io(RedisIoLookupResult& r, const CheckedDone& done) {
  using Outcome = RedisIoLookup::Outcome;
  if (r.outcome == Outcome::failed) {
    ++misses_;
    return done(Lookup{LookupStatus::miss, {}}, 0);
  }
  observe_seq(r.seq);
  if (r.outcome != Outcome::hit) {
    if (r.outcome == Outcome::stale) ++stale_;
    ++misses_;
    return done(Lookup{LookupStatus::miss, {}}, r.seq);
  }
  // The entry's own stored time and TTL (what the put script set PX from).
  Lookup lookup = hit_from_entry(std::move(r.value), r.expires_unix_ms);
  if (lookup.status == LookupStatus::error) lookup.status = LookupStatus::miss;
  done(std::move(lookup), r.seq);
}

void RedisStore::get_checked(const std::string& key, std::function<void(Lookup, uint64_t)> done) {
  get_checked_on(key, nullptr, std::move(done));
}

void RedisStore::get_checked_on(const std::string& key, PostFn post,
                                std::function<void(Lookup, uint64_t)> done) {
  auto shared_done = std::make_shared<const CheckedDone>(std::move(done));
  size_t key_hash = shard_of(key);
  if (post && get_on_io_thread(key, key_hash, post, shared_done)) return;
  get_on_executor(key, key_hash, std::move(post), std::move(shared_done));
}

bool RedisStore::get_on_io_thread(const std::string& key, size_t key_hash, const PostFn& post,
                                  const std::shared_ptr<const CheckedDone>& done) {
  RedisIoLookup* here = nullptr;
  for (const auto& l : lookups_on_io_)
    if (l->channel().context().get_executor().running_in_this_thread()) here = l.get();
  if (!here || writes_in_flight(key_hash).load() != 0 || !here->try_ready()) return false;
  ++io_lookups_;
  auto deadline = RedisIoChannel::Clock::now() + get_deadline();
  here->lookup(key, deadline, [this, key, key_hash, post, done](RedisIoLookup::Result& r) {
    if (r.outcome == RedisIoLookup::Outcome::fallback) return get_on_executor(key, key_hash, post, done);
    if (r.outcome == RedisIoLookup::Outcome::failed) count_error("get");
    // Decoded on the caller's executor, as on the executor's path.
    post([this, result = std::move(r), done]() mutable { finish_from_io(result, *done); });
  });
  return true;
}

void RedisStore::get_on_executor(const std::string& key, size_t key_hash, PostFn post,
                                 std::shared_ptr<const CheckedDone> done) {
  auto job = std::make_shared<RedisJob>();
  job->op = "get";
  job->commands.push_back(get_command(key));
  if (!post) {
    job->done = [this, done = std::move(done)](RedisJobResult& r) { finish_from_script(r, *done); };
  } else {
    job->done = [this, post = std::move(post), done = std::move(done)](RedisJobResult& r) {
      auto result = std::make_shared<RedisJobResult>(std::move(r));
      post([this, done, result] { finish_from_script(*result, *done); });
    };
  }
  executor_.submit(key_hash, job, TimerQueue::Clock::now() + get_deadline());
}

void RedisStore::get(const std::string& key, std::function<void(Lookup)> done) {
  get_checked(key, [done = std::move(done)](Lookup lookup, uint64_t) { done(std::move(lookup)); });
}

void RedisStore::get_on(const std::string& key, PostFn post, std::function<void(Lookup)> done) {
  get_checked_on(key, std::move(post), [done = std::move(done)](Lookup lookup, uint64_t) { done(std::move(lookup)); });
}

void RedisStore::put(const std::string& key, std::shared_ptr<const Generation> generation,
                     std::chrono::seconds ttl) {
  if (!generation || !generation->complete()) return;
  if (ttl.count() <= 0) ttl = options_.default_ttl;
  auto job = std::make_shared<RedisJob>();
  job->op = "put";
  int64_t ttl_ms = int64_t(ttl.count()) * 1000;
  job->commands.push_back({"EVALSHA", put_sha(), "1", redis_key(key), options_.prefix, generation->model,
                           generation->ns, std::to_string(now_unix_ms()), std::to_string(ttl_ms),
                           encode_generation(*generation)});
  size_t key_hash = shard_of(key);
  auto& in_flight = writes_in_flight(key_hash);
  ++in_flight;  // before submit: done may run inline
  job->done = [this, &in_flight](RedisJobResult& r) {
    if (r.ok && r.replies[0].is_error()) count_error("put");
    --in_flight;
  };
  executor_.submit(key_hash, job);
}

void RedisStore::erase(const std::string& key) {
  auto job = std::make_shared<RedisJob>();
  job->op = "erase";
  job->commands.push_back({"DEL", redis_key(key)});
  size_t key_hash = shard_of(key);
  auto& in_flight = writes_in_flight(key_hash);
  ++in_flight;
  job->done = [&in_flight](RedisJobResult&) { --in_flight; };
  executor_.submit(key_hash, job);
}

void RedisStore::extend(const std::string& key, std::chrono::seconds ttl) {
  auto job = std::make_shared<RedisJob>();
  job->op = "extend";
  job->commands.push_back({"PEXPIRE", redis_key(key), std::to_string(int64_t(ttl.count()) * 1000), "GT"});
  job->done = [this](RedisJobResult& r) {
    if (r.ok && r.replies[0].is_error()) count_error("extend");
  };
  executor_.submit(shard_of(key), job);
}

void RedisStore::purge(const PurgeScope& scope, std::function<void(bool)> done) {
  std::string epoch = options_.prefix + "epoch:";
  switch (scope.kind) {
    case PurgeScope::Kind::all: epoch += "all"; break;
    case PurgeScope::Kind::model: epoch += "model:" + scope.name; break;
    case PurgeScope::Kind::ns: epoch += "ns:" + scope.name; break;
  }
  auto job = std::make_shared<RedisJob>();
  job->op = "purge";
  job->commands.push_back({"EVALSHA", purge_sha(), "1", epoch, options_.prefix, fresh_epoch_seq()});
  job->done = [this, done = std::move(done)](RedisJobResult& r) {
    bool ok = r.ok && r.replies[0].type == RedisValue::Type::integer;
    if (r.ok && !ok) count_error("purge");
    if (ok) observe_seq(uint64_t(r.replies[0].integer));
    if (done) done(ok);
  };
  // Earlier puts must not land after the bump: wait for every shard.
  auto t = executor_.options().timeouts;
  executor_.submit_after_all(job, TimerQueue::Clock::now() + t.command * 3 + t.connect);
}

uint64_t RedisStore::clear() {
  auto promise = std::make_shared<std::promise<bool>>();
  auto result = promise->get_future();
  purge(PurgeScope{}, [promise](bool ok) { promise->set_value(ok); });
  result.wait();  // bounded: the purge job has a deadline
  return 0;
}

void RedisStore::set_epoch_listener(std::function<void(uint64_t)> listener) {
  std::lock_guard lock(listener_mutex_);
  listener_ = std::move(listener);
}

void RedisStore::observe_seq(uint64_t seq) {
  uint64_t old = seq_.exchange(seq);
  if (old == seq) return;
  std::lock_guard lock(listener_mutex_);
  if (listener_) listener_(seq);
}

void RedisStore::poll_epoch() {
  if (executor_.breaker().allow()) {
    auto job = std::make_shared<RedisJob>();
    job->op = "epoch";
    job->commands.push_back({"GET", options_.prefix + "epoch:seq"});
    job->done = [this](RedisJobResult& r) {
      if (r.ok) observe_seq(seq_of(r.replies[0]));
    };
    executor_.submit(poll_shard_++, job, TimerQueue::Clock::now() + executor_.options().timeouts.command);
  }
  executor_.timer().schedule_after(options_.epoch_poll, [this] { poll_epoch(); });
}

RedisStoreStats RedisStore::stats() const {
  return RedisStoreStats{hits_.load(), misses_.load(), errors_.load(), stale_.load(), io_lookups_.load()};
}

}  // namespace reprox
