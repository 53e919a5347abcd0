#include "proxy/app/chat_handler.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <chrono>
#include <cstdint>

#include "policies/cache_policy.hpp"
#include "policies/canonical_key.hpp"
#include "policies/tenant.hpp"
#include "proxy/api/cache_control.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "proxy/api/chat_response.hpp"
#include "proxy/app/answer_fields.hpp"
#include "proxy/app/http_util.hpp"
#include "proxy/app/near_flow.hpp"
#include "proxy/app/request_log.hpp"

namespace reprox {

namespace {

using Clock = std::chrono::steady_clock;

// `ttl_s`: on a hit, what the entry has left; on a stored miss, the TTL it
// gets; -1 when nothing is stored.
void add_key_headers(http::fields& h, const ChatContext& c, const char* cache, int64_t ttl_s) {
  h.set("x-reprox-cache", cache);
  h.set("x-reprox-key", c.key.key);
  h.set("x-reprox-seed", std::to_string(c.key.seed));
  if (cache == std::string_view("bypass")) h.set("x-reprox-cache-reason", c.cacheability.reason);
  if (ttl_s >= 0) h.set("x-reprox-ttl", std::to_string(ttl_s));
  if (!c.prepared->sampling_mode.empty()) h.set("x-reprox-fallback", "greedy");
}

// The TTL a miss's answer is stored with, or -1 when it is not stored.
int64_t stored_ttl(const ChatContext& c) {
  return c.cacheability.writable ? c.prepared->ttl.ttl_s : -1;
}

// The JSON tail of a complete generation, rendered once per entry and thread
// (hits of one entry repeat it; only the head with id and created is fresh).
// `owner` is what the tail is a pure function of: the memory tier's
// generation, or a Redis entry's bytes (hits of one entry on one thread share
// them, see CheckedEntryMemo). Slots are keyed by the owner's address; the
// weak_ptr proves that address still holds the same object.
template <typename Owner, typename Render>
std::shared_ptr<const std::string> memoized_tail(const std::shared_ptr<const Owner>& owner, Render render) {
  struct Slot {
    const Owner* raw = nullptr;
    std::weak_ptr<const Owner> alive;
    std::shared_ptr<const std::string> tail;
  };
  thread_local std::array<Slot, 64> memo;
  Slot& slot = memo[(reinterpret_cast<std::uintptr_t>(owner.get()) / alignof(Owner)) % memo.size()];
  if (slot.raw != owner.get() || slot.alive.expired()) {
    slot.raw = owner.get();
    slot.alive = owner;
    slot.tail = std::make_shared<const std::string>(render());
  }
  return slot.tail;
}

// The body after "created" (api::render_completion_suffix): model and
// fingerprint are the key's, so they are the same for every answer of one
// entry and are memoized with its tail.
std::shared_ptr<const std::string> completion_suffix(const ChatContext& c, const StoredGeneration& gen) {
  if (const EncodedGeneration* encoded = gen.encoded()) {
    // A Redis hit: render from the entry's bytes, without decoding them.
    return memoized_tail(gen.bytes(), [&c, encoded] {
      auto walk = [encoded](const std::function<void(const EventView&)>& fn) { encoded->for_each_event(fn); };
      return api::render_completion_suffix(c.model_id, c.fingerprint,
                                           api::render_completion_tail(encoded->n_choices(), encoded->usage(), walk));
    });
  }
  const auto& decoded = gen.shared();
  return memoized_tail(decoded, [&c, &decoded] {
    return api::render_completion_suffix(c.model_id, c.fingerprint, api::render_completion_tail(*decoded));
  });
}

// Every answer for a key shows that key's model and fingerprint, as live
// streams must (they start before the backend reports its own fingerprint at
// completion): a miss, its followers and later hits then agree byte for byte
// apart from id and created.
}  // namespace

void answer_from_generation(ChatContext& c, const StoredGeneration& gen, const char* cache, int64_t age_seconds,
                            int64_t ttl_s, const std::string& tier) {
  RenderedAnswer answer;
  answer.fields = answer_fields(c, cache, age_seconds, ttl_s, tier);
  answer.body = c.request.stream
                    ? api::render_stream(api::fresh_meta(c.model_id, c.fingerprint), *gen, c.request.include_usage)
                    : api::render_completion_from_suffix(api::new_completion_id(), api::unix_seconds_now(),
                                                         *completion_suffix(c, gen));
  // Observed and logged before the answer is handed over: the session may
  // write it at once (dispatch on its own strand, then a speculative send),
  // and a client that reads /metrics or the status page next must see it.
  c.app.metrics->request_duration(cache, std::chrono::duration<double>(Clock::now() - c.started).count());
  if (c.app.audit_log) {
    // A Redis hit's usage is read from its bytes: logging never decodes it.
    const Usage usage = gen.encoded() ? gen.encoded()->usage() : gen->usage;
    log_chat(c, ChatOutcome{cache, tier, &usage, 200, "", ttl_s});
  } else {
    log_chat(c, ChatOutcome{cache, tier, nullptr, 200, "", ttl_s});  // the status page's recent requests
  }
  c.responder->respond_rendered(std::move(answer));
}

namespace {

// Follows a Flight for one client. Lives on the session's strand: every
// notice from the flight is posted there. For a stream it is also the
// session's StreamSource once the first event (or the end) is known, so a
// generation that fails before its first token still gets a proper status.
class FlightReader final : public StreamSource, public std::enable_shared_from_this<FlightReader> {
 public:
  FlightReader(std::shared_ptr<ChatContext> c, std::shared_ptr<Flight> flight, const char* cache)
      : c_(std::move(c)), flight_(std::move(flight)), cache_(cache),
        renderer_(api::fresh_meta(c_->model_id, c_->fingerprint), c_->request.n > 0 ? uint32_t(c_->request.n) : 1) {}

  void begin() {
    std::weak_ptr<FlightReader> weak = shared_from_this();
    auto exec = c_->responder->executor();
    reader_ = flight_->subscribe([weak, exec] {
      auto self = weak.lock();
      if (!self || self->notice_pending_.exchange(true)) return;
      net::post(exec, [self] {
        self->notice_pending_ = false;
        self->on_notice();
      });
    });
    c_->responder->on_disconnect([self = shared_from_this()] { self->abort(); });
    net::post(c_->responder->executor(), [self = shared_from_this()] { self->on_notice(); });
  }

  // StreamSource
  void start(std::function<void()> wake) override { wake_ = std::move(wake); }
  Status pull(std::string& out) override {
    events_.clear();
    auto r = flight_->read(next_, events_);
    next_ = r.next;
    for (const auto& e : events_) renderer_.render(out, e);
    if (r.state == FlightState::running) return Status::more;
    finish_stream(out, r.state);
    return Status::done;
  }
  void abort() override { leave(); }

 private:
  void on_notice() {
    if (left_) return;
    if (streaming_) {
      if (wake_) wake_();
      return;
    }
    auto r = flight_->status();
    if (r.state == FlightState::failed && r.next == 0) return fail(flight_->error());
    if (r.state == FlightState::cancelled) return fail(api::ApiError{503, "the generation was cancelled", "server_error", "", "cancelled"});
    if (c_->request.stream) {
      if (r.next == 0 && r.state == FlightState::running) return;  // wait for the first event
      streaming_ = true;
      http::response<http::empty_body> head{http::status::ok, 11};
      head.set(http::field::content_type, "text/event-stream");
      head.set(http::field::cache_control, "no-cache");
      add_key_headers(head.base(), *c_, cache_, cache_ == std::string_view("bypass") ? -1 : stored_ttl(*c_));
      c_->responder->stream(std::move(head), shared_from_this());
      return;
    }
    if (r.state == FlightState::complete) {
      auto result = flight_->result();
      leave();
      answer_from_generation(*c_, result, cache_, -1, cache_ == std::string_view("bypass") ? -1 : stored_ttl(*c_));
    } else if (r.state == FlightState::failed) {
      fail(flight_->error());
    }
  }

  void finish_stream(std::string& out, FlightState state) {
    if (state == FlightState::complete) {
      auto result = flight_->result();
      if (c_->request.include_usage) api::render_usage_chunk(out, renderer_.meta(), result->usage);
      out += api::kDoneEvent;
      log_chat(*c_, ChatOutcome{cache_, "", &result->usage, 200, "", stored_ttl(*c_)});
    } else {
      auto err = state == FlightState::failed ? flight_->error()
                                               : api::ApiError{503, "the generation was cancelled", "server_error", "", "cancelled"};
      api::render_error_event(out, err.to_json());
      log_chat(*c_, ChatOutcome{cache_, "", nullptr, err.status, err.code.empty() ? err.type : err.code, -1});
    }
    c_->app.metrics->request_duration(cache_, std::chrono::duration<double>(Clock::now() - c_->started).count());
    leave();
  }

  void fail(const api::ApiError& err) {
    leave();
    log_chat(*c_, ChatOutcome{cache_, "", nullptr, err.status, err.code.empty() ? err.type : err.code, -1});
    respond_error(*c_->responder, err);
  }

  void leave() {
    if (left_) return;
    left_ = true;
    // The leader reports the generation's time to first token once.
    if (cache_ == std::string_view("miss") || cache_ == std::string_view("bypass")) {
      double ttft = flight_->time_to_first_event();
      if (ttft >= 0) c_->app.metrics->time_to_first_token(ttft);
    }
    flight_->unsubscribe(reader_);
  }

  std::shared_ptr<ChatContext> c_;
  std::shared_ptr<Flight> flight_;
  const char* cache_;
  api::ChunkRenderer renderer_;
  uint64_t reader_ = 0;
  size_t next_ = 0;
  std::vector<GenEvent> events_;
  std::atomic<bool> notice_pending_{false};
  bool streaming_ = false;
  bool left_ = false;
  std::function<void()> wake_;
};

// What a miss of this request asks the backend for (also what an audit re-runs).
std::shared_ptr<BackendRequest> backend_request(const ChatContext& c) {
  auto breq = std::make_shared<BackendRequest>();
  breq->chat = c.request;
  breq->model_id = c.model_id;
  breq->seed = c.key.seed;
  breq->max_tokens = policy::effective_max_tokens(c.request, c.app.backend->default_max_tokens(c.model_id));
  breq->tenant = c.tenant;
  breq->authorization = c.authorization;
  return breq;
}

// Starts the backend for a flight this request leads.
void start_generation(const std::shared_ptr<ChatContext>& c, const std::shared_ptr<Flight>& flight) {
  api::ApiError err;
  auto handle = c->app.backend->generate(backend_request(*c), flight, &err);
  if (!handle) {
    flight->on_error(err);
    return;
  }
  flight->attach(std::move(handle));
}

// Feeds a finished generation into a flight, as if a backend produced it.
void replay_into(Flight& flight, const Generation& gen) {
  for (const auto& e : gen.events) flight.on_event(e);
  flight.on_complete(gen.usage, gen.system_fingerprint);
}

// With a shared tier: only one instance generates a key at a time. This
// instance either leads (generates, stores, then releases the lock), finds
// the result another instance stored while it waited, or, when the bounded
// wait runs out, generates itself.
void start_once_across_instances(const std::shared_ptr<ChatContext>& c, const std::shared_ptr<Flight>& flight) {
  RedisFlightLock* lock = c->app.flight_lock;
  std::string key = c->key.key;
  lock->acquire(key, [c, flight, lock, key](FlightLockResult r) {
    switch (r.outcome) {
      case FlightLockOutcome::hit:
        replay_into(*flight, *r.lookup.entry.generation);
        return;
      case FlightLockOutcome::leader:
        flight->set_on_finish([lock, key] { lock->release(key); });
        return start_generation(c, flight);
      case FlightLockOutcome::generate:
        return start_generation(c, flight);
    }
  });
}

}  // namespace

void generate_and_answer(const std::shared_ptr<ChatContext>& c, bool coalesce) {
  AppContext& app = c->app;
  const bool writable = c->cacheability.writable;
  const auto ttl = std::chrono::seconds(c->prepared->ttl.ttl_s);
  const policy::ResponsePolicy response_policy = app.options.response_policy;
  uint32_t n = static_cast<uint32_t>(c->request.n);
  Metrics* metrics = app.metrics;
  CacheStore* store = app.store;
  std::string key = c->key.key;
  std::string ns = c->request.cache.ns.value_or("");
  AppContext* a = &app;
  auto on_done = [=, prepared = c->prepared, shadow = c->near_shadow](std::shared_ptr<const Generation> gen) {
    metrics->tokens(gen->usage.prompt_tokens, gen->usage.completion_tokens, gen->usage.cached_tokens);
    const bool stored = writable && store && policy::response_cacheable(*gen, response_policy).store;
    if (stored) store->put(key, gen, ttl);
    near_after_generation(*a, *prepared, *gen, stored, ttl, shadow);
  };
  auto make = [&] { return std::make_shared<Flight>(key, c->model_id, ns, n, &app.flights, on_done); };
  std::shared_ptr<Flight> flight;
  bool leader = true;
  if (coalesce) {
    auto joined = app.flights.join(key, make);
    flight = joined.flight;
    leader = joined.leader;
  } else {
    SingleFlight* unregistered = &app.flights;  // removal of an unknown key is a no-op
    flight = std::make_shared<Flight>(key + ":bypass", c->model_id, ns, n, unregistered, nullptr);
  }
  const char* cache = !coalesce ? "bypass" : leader ? "miss" : "coalesced";
  app.metrics->lookup(cache);
  auto reader = std::make_shared<FlightReader>(c, flight, cache);
  reader->begin();  // subscribe before the backend starts, so nothing is missed
  if (!leader) return;
  // Across instances only when an answer another instance stores may serve
  // this request: never for a refresh (no-cache) or a max-age the stored
  // entry failed, which must generate.
  const bool may_replay = c->cacheability.readable && !c->request.cache.max_age_seconds;
  if (coalesce && writable && may_replay && app.flight_lock) return start_once_across_instances(c, flight);
  start_generation(c, flight);
}


namespace {

// A hit's remaining TTL, after a hot-key extension when this hit makes the
// key hot (the store extends the entry: L1 now, Redis by a PEXPIRE that is
// not waited for).
int64_t ttl_after_hit(ChatContext& c, const CacheEntry& entry) {
  AppContext& app = c.app;
  const int64_t now = now_unix_ms();
  int64_t left_s = entry.expires_unix_ms == 0 ? 0 : std::max<int64_t>(0, (entry.expires_unix_ms - now) / 1000);
  app.metrics->ttl_remaining_at_hit(double(left_s));
  if (!app.hot_keys) return left_s;
  const int64_t extended = app.hot_keys->on_hit(c.key.key, c.prepared->ttl.ttl_s, c.prepared->rule->max_ttl_s, now);
  if (extended <= left_s) return left_s;
  app.store->extend(c.key.key, std::chrono::seconds(extended));
  app.metrics->ttl_extension();
  return extended;
}

void answer_lookup(const std::shared_ptr<ChatContext>& c, Lookup& lookup) {
  AppContext& app = c->app;
  if (lookup.status == LookupStatus::hit) {
    int64_t age = std::max<int64_t>(0, (now_unix_ms() - lookup.entry.stored_unix_ms) / 1000);
    const auto& max_age = c->request.cache.max_age_seconds;
    if (!max_age || age <= *max_age) {
      app.metrics->lookup("hit");
      if (app.auditor && app.auditor->pick())
        app.auditor->audit(c->key.key, backend_request(*c), lookup.entry.generation.shared());
      const int64_t ttl_s = ttl_after_hit(*c, lookup.entry);
      return answer_from_generation(*c, lookup.entry.generation, "hit", age, ttl_s, lookup.entry.tier);
    }
  }
  if (c->request.cache.only_if_cached) {
    app.metrics->lookup("miss");
    api::ApiError err{504, "no cached answer for this request (only-if-cached)", "invalid_request_error", "",
                      "cache_miss"};
    log_chat(*c, ChatOutcome{"miss", "", nullptr, err.status, err.code, -1});
    return respond_error(*c->responder, err);
  }
  after_exact_miss(c);
}

// Takes the tenant's slot, or answers 429 with Retry-After and returns
// false. Limits apply per API key even with a shared cache.
bool admit_tenant(ChatContext& c) {
  const std::string& tenant = c.tenant.empty() ? policy::tenant_of(c.authorization) : c.tenant;
  TenantLimiter::Admission a = c.app.tenant_limits->admit(tenant);
  if (a.refusal == TenantLimiter::Refusal::none) {
    c.tenant_permit = std::move(a.permit);
    return true;
  }
  const bool rate = a.refusal == TenantLimiter::Refusal::rate;
  c.app.metrics->tenant_rejection(rate ? "rate" : "concurrency", tenant);
  api::ApiError err{429,
                    rate ? "this API key is over its request rate; retry after the time in Retry-After"
                         : "this API key has too many requests in progress; retry shortly",
                    "requests", "", "rate_limit_exceeded"};
  log_chat(c, ChatOutcome{"", "", nullptr, err.status, err.code, -1});
  Response res = json_response(429, err.to_json());
  res.set(http::field::retry_after, std::to_string(a.retry_after_s));
  c.responder->respond(std::move(res));
  return false;
}

}  // namespace

void handle_chat(AppContext& app, Request&& request, std::shared_ptr<Responder> responder) {
  auto started = Clock::now();
  std::shared_ptr<const PreparedChat> prepared;
  if (auto err = prepare_chat(app, request, prepared)) {
    log_rejected_chat(app, *err, started);
    return respond_error(*responder, *err);
  }
  auto c = std::make_shared<ChatContext>(app, responder, std::move(prepared), started);
  if (app.tenant_limits && !admit_tenant(*c)) return;
  if (c->key.seed_injected) app.metrics->seed_injected();

  if (c->cacheability.bypass()) return generate_and_answer(c, false);
  if (!c->cacheability.readable) return generate_and_answer(c, true);

  // The memory tier answers inline, with no callback to allocate: the hit
  // path. (The tiered store would look there first too.)
  if (app.memory) {
    Lookup local = app.memory->lookup(c->key.key, now_unix_ms());
    if (local.status == LookupStatus::hit) return answer_lookup(c, local);
  }
  // The answer (and, for Redis, its decoding) runs on this request's executor.
  auto post = [ex = c->responder->executor()](std::function<void()> task) { net::dispatch(ex, std::move(task)); };
  app.store->get_on(c->key.key, std::move(post), [c](Lookup lookup) { answer_lookup(c, lookup); });
}

}  // namespace reprox
