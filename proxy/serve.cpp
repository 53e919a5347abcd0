#include "proxy/serve.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cctype>
#include <fstream>
#include <thread>
#include <unordered_set>

#include "policies/tenant.hpp"
#include "proxy/app/router.hpp"
#include "proxy/app/status_board.hpp"
#include "proxy/backend/upstream_backend.hpp"
#include "proxy/cache/redis/redis_counter.hpp"
#include "proxy/cache/redis/redis_flight_lock.hpp"
#include "proxy/cache/memory_near_index.hpp"
#include "proxy/cache/redis/redis_near_index.hpp"
#include "proxy/cache/tiered_store.hpp"
#include "proxy/server/server.hpp"

namespace reprox {

namespace {

std::unique_ptr<backend::UpstreamBackend> make_upstream(const Config& c, IoPool& pool) {
  backend::UpstreamOptions o;
  o.url = c.upstream;
  o.api_key = c.upstream_api_key;
  o.connect_timeout = std::chrono::milliseconds(c.upstream_connect_timeout_ms);
  o.first_byte_timeout = std::chrono::milliseconds(c.upstream_first_byte_timeout_ms);
  o.idle_timeout = std::chrono::milliseconds(c.upstream_idle_timeout_ms);
  o.default_max_tokens = c.upstream_default_max_tokens;
  // The upstream's answers can change whenever it does; all we can pin is
  // where they come from.
  o.fingerprint = "fp_" + policy::sha256_hex("upstream:" + c.upstream).substr(0, 16);
  return std::make_unique<backend::UpstreamBackend>(std::move(o),
                                                    [&pool]() -> net::io_context& { return pool.next(); });
}

// [redis] settings; the URL's timeout parameters still win (they are
// applied by the store over `timeouts`).
void apply_redis_config(const Config& c, RedisStoreOptions& o) {
  o.timeouts.connect = std::chrono::milliseconds(c.redis_connect_timeout_ms);
  o.timeouts.command = std::chrono::milliseconds(c.redis_command_timeout_ms);
  o.connections = size_t(std::max<int64_t>(1, c.redis_connections));
  o.queue_capacity = size_t(std::max<int64_t>(1, c.redis_queue_capacity));
  o.breaker.failure_threshold = int(std::max<int64_t>(1, c.redis_breaker_failures));
  o.breaker.cooldown = std::chrono::milliseconds(std::max<int64_t>(1, c.redis_breaker_cooldown_ms));
  o.breaker.max_cooldown = std::max(o.breaker.max_cooldown, o.breaker.cooldown);
  o.epoch_poll = std::chrono::milliseconds(std::max<int64_t>(1, c.redis_epoch_poll_ms));
}

// The listeners: the API's, then the admin one when [admin] listen is set.
using Listeners = std::vector<Server*>;

size_t open_connections(const Listeners& listeners) {
  size_t n = 0;
  for (const Server* s : listeners) n += s->connections();
  return n;
}

// Polls until every connection has closed or the deadline passes.
void wait_for_drain(IoPool& pool, const Listeners& listeners, std::chrono::steady_clock::time_point deadline) {
  auto timer = std::make_shared<net::steady_timer>(pool.main(), std::chrono::milliseconds(20));
  timer->async_wait([&pool, listeners, deadline, timer](beast::error_code) {
    const size_t open = open_connections(listeners);
    if (open == 0 || std::chrono::steady_clock::now() >= deadline) {
      if (open != 0) spdlog::warn("drain timeout: closing {} connection(s) still in flight", open);
      pool.stop();
      return;
    }
    wait_for_drain(pool, listeners, deadline);
  });
}

ServerOptions server_options(const Config& config) {
  ServerOptions so;
  split_listen(config.listen, so.host, so.port);
  so.io_threads = std::max(1, config.threads);
  so.header_limit = config.header_limit;
  so.body_limit = config.body_limit;
  so.read_timeout = std::chrono::milliseconds(config.read_timeout_ms);
  so.write_timeout = std::chrono::milliseconds(config.write_timeout_ms);
  so.max_connections = config.max_connections;
  so.drain_timeout = std::chrono::milliseconds(config.drain_timeout_ms);
  return so;
}

// The shared tier behind the memory L1 (--redis); all null without one.
// Members are destroyed in reverse order: the tiered store and the counter
// go before the RedisStore they borrow.
struct CacheTiers {
  std::unique_ptr<RedisStore> redis;
  std::unique_ptr<TieredStore> tiered;
  std::unique_ptr<RedisTierCounter> counter;  // reprox_cache_{entries,bytes}{tier="redis"}
};

// Starts even when Redis is down: the chat path answers from L1 and
// /healthz says "degraded" while the breaker is open.
CacheTiers make_cache_tiers(const Config& config, IoPool& pool, Metrics& metrics, MemoryStore& memory) {
  CacheTiers tiers;
  if (config.redis.empty()) return tiers;
  auto ro = redis_store_options_from_url(config.redis);
  apply_redis_config(config, ro);
  ro.default_ttl = std::chrono::seconds(config.cache_ttl);
  ro.on_error = [&metrics](const char* op) { metrics.store_error("redis", op); };
  // The URL's timeout parameters win over [redis] (as the store applies them).
  auto connect_ms = ro.endpoint.connect_timeout_ms >= 0 ? ro.endpoint.connect_timeout_ms
                                                        : int(ro.timeouts.connect.count());
  auto command_ms = ro.endpoint.command_timeout_ms >= 0 ? ro.endpoint.command_timeout_ms
                                                        : int(ro.timeouts.command.count());
  spdlog::info("shared cache tier: redis at {} (connect timeout {} ms, command timeout {} ms, {} connections)",
               ro.endpoint.describe(), connect_ms, command_ms, ro.connections);
  tiers.redis = std::make_unique<RedisStore>(std::move(ro));
  if (config.redis_io_lookups) tiers.redis->run_lookups_on(pool.contexts());
  tiers.tiered = std::make_unique<TieredStore>(memory, *tiers.redis);
  RedisCounterOptions co;
  co.interval = std::chrono::milliseconds(config.redis_stats_interval_ms);
  tiers.counter = std::make_unique<RedisTierCounter>(*tiers.redis, co);
  return tiers;
}

// Purge for a memory-only cache: always "taken", there being no shared tier.
std::function<void(const PurgeScope&, std::function<void(uint64_t, bool)>)> memory_purge(MemoryStore& memory) {
  return [m = &memory](const PurgeScope& scope, std::function<void(uint64_t, bool)> done) {
    uint64_t n = 0;
    switch (scope.kind) {
      case PurgeScope::Kind::all: n = m->clear(); break;
      case PurgeScope::Kind::model: n = m->purge_if([&](const Generation& g) { return g.model == scope.name; }); break;
      case PurgeScope::Kind::ns: n = m->purge_if([&](const Generation& g) { return g.ns == scope.name; }); break;
    }
    done(n, true);
  };
}

// Points app at the cache: its store, purge, health and, with a shared
// tier, the cross-instance flight lock (returned; app borrows it) and the
// tier's gauges.
std::unique_ptr<RedisFlightLock> wire_cache(const Config& config, MemoryStore& memory, const CacheTiers& tiers,
                                            AppContext& app) {
  app.store = tiers.tiered ? static_cast<CacheStore*>(tiers.tiered.get()) : &memory;
  std::unique_ptr<RedisFlightLock> flight_lock;
  if (tiers.tiered) {
    FlightLockOptions fo;
    fo.max_wait = std::chrono::milliseconds(config.redis_lock_wait_ms);
    flight_lock = std::make_unique<RedisFlightLock>(*tiers.redis, fo);
    app.flight_lock = flight_lock.get();
    app.purge = [t = tiers.tiered.get()](const PurgeScope& scope, std::function<void(uint64_t, bool)> done) {
      t->purge(scope, std::move(done));
    };
  } else {
    app.purge = memory_purge(memory);
  }
  if (tiers.counter) {
    app.shared_tier = true;
    auto reclaimed_seen = std::make_shared<std::atomic<uint64_t>>(0);
    app.shared_tier_scrape = [c = tiers.counter.get(), reclaimed_seen](Metrics& m) {
      auto n = c->snapshot();
      m.tier_state("redis", double(n.entries), double(n.bytes), 0);
      // Stale entries the count deleted are invalidations too.
      uint64_t before = reclaimed_seen->exchange(n.reclaimed_total);
      if (n.reclaimed_total > before) m.invalidations(double(n.reclaimed_total - before));
    };
  }
  app.health_detail = [r = tiers.redis.get()] { return std::string(r && !r->healthy() ? "degraded" : "ok"); };
  return flight_lock;
}

// The upstream (--upstream) or else the embedded engine; sets app.backend
// and the app hooks that backend provides. Throws std::runtime_error when
// neither is available.
std::unique_ptr<Backend> make_backend(const Config& config, IoPool& pool, const LocalBackendFactory& make_local,
                                      AppContext& app) {
  std::unique_ptr<Backend> backend;
  if (!config.upstream.empty()) {
    auto upstream = make_upstream(config, pool);
    auto* raw = upstream.get();
    app.forward = [raw](Request&& req, std::function<void(Response&&)> done) {
      raw->forward(std::move(req), [done = std::move(done)](Response res) { done(std::move(res)); });
    };
    backend = std::move(upstream);
  } else {
    if (!make_local) throw std::runtime_error("this build has no embedded engine: pass --upstream URL");
    auto parts = make_local(config);
    backend = std::move(parts.backend);
    app.text = parts.text;
    app.before_scrape = std::move(parts.before_scrape);
  }
  app.backend = backend.get();
  return backend;
}

// Null unless --audit-every; the auditor borrows backend and metrics, and
// reports to the fallback when there is one.
std::unique_ptr<ReproAuditor> make_auditor(const Config& config, Backend& backend, Metrics& metrics,
                                           AppContext& app) {
  if (config.audit_every <= 0) return nullptr;
  ReproAuditOptions o{uint64_t(config.audit_every), size_t(config.audit_max_in_flight), nullptr};
  if (GreedyFallback* fallback = app.fallback)
    o.on_result = [fallback](const std::string& model, bool mismatch) { fallback->record(model, mismatch); };
  auto auditor = std::make_unique<ReproAuditor>(std::move(o), backend, metrics, app.flights);
  app.auditor = auditor.get();
  spdlog::info("reproducibility audits: one cache hit in {} is generated again and compared", config.audit_every);
  return auditor;
}

// [[cache.rule]] and [cache] into the app's rule list and default rule.
void apply_cache_policy(const Config& config, AppOptions& o) {
  o.default_rule = policy::CacheRule{};
  o.default_rule.ttl_s = config.cache_ttl;
  o.default_rule.max_ttl_s = std::max<int64_t>(config.cache_ttl, policy::kDefaultMaxTtlSeconds);
  for (const CacheRuleConfig& c : config.rules) {
    policy::CacheRule r;
    r.model = c.model;
    r.ns = c.ns;
    r.tenant = c.tenant;
    r.route = c.route;
    r.ttl_s = c.ttl_s.value_or(config.cache_ttl);
    r.max_ttl_s = c.max_ttl_s.value_or(std::max<int64_t>(r.ttl_s, policy::kDefaultMaxTtlSeconds));
    r.cache = c.cache;
    r.tools = c.tools;
    r.near = c.near == "serve" ? policy::NearMode::serve : c.near == "shadow" ? policy::NearMode::shadow
                                                                             : policy::NearMode::off;
    r.near_threshold = c.near_threshold;
    r.name = c.source.empty() ? "rule " + std::to_string(o.rules.size() + 1) : c.source;
    o.rules.push_back(std::move(r));
  }
  o.response_policy.store_truncated = config.store_truncated;
}

// The parts the cache policies need: hot-key counting, the greedy fallback
// (only with audits: it feeds on them) and the logs. Members outlive `app`'s
// use of them.
struct PolicyParts {
  std::unique_ptr<HotKeys> hot_keys;
  std::unique_ptr<GreedyFallback> fallback;
  std::unique_ptr<AuditLog> audit_log;
  std::unique_ptr<NearIndex> near_index;
  std::unique_ptr<TenantLimiter> tenant_limits;
  std::unique_ptr<std::unordered_set<std::string>> client_keys;
};

// [auth] keys_file: one hex SHA-256 of an allowed client key per line ('#'
// starts a comment). Throws std::runtime_error naming FILE:LINE.
std::unique_ptr<std::unordered_set<std::string>> load_client_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the client keys file");
  auto keys = std::make_unique<std::unordered_set<std::string>>();
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    std::string hash = line.substr(first, last - first + 1);
    for (char& ch : hash) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw std::runtime_error(path + ":" + std::to_string(n) +
                               ": expected the SHA-256 of a key as 64 hex digits (printf %s KEY | sha256sum)");
    keys->insert(std::move(hash));
  }
  spdlog::info("client keys: {} allowed (from {})", keys->size(), path);
  return keys;
}

// The near-duplicate index, when a rule turns near matching on: in Redis
// beside the entries with a shared tier, else in memory.
std::unique_ptr<NearIndex> make_near_index(const AppOptions& o, RedisStore* redis, uint64_t memory_bytes) {
  bool any = false;
  for (const auto& rule : o.rules) any = any || rule.near != policy::NearMode::off;
  if (!any) return nullptr;
  spdlog::info("near-duplicate matching on for some rules; candidate index in {}", redis ? "Redis" : "memory");
  if (redis) return std::make_unique<RedisNearIndex>(*redis);
  return std::make_unique<MemoryNearIndex>(memory_bytes);
}

PolicyParts make_policy_parts(const Config& config, Metrics& metrics, RedisStore* redis, AppContext& app) {
  PolicyParts p;
  p.near_index = make_near_index(app.options, redis, config.near_index_bytes);
  app.near_index = p.near_index.get();
  if (!config.auth_keys_file.empty()) {
    p.client_keys = load_client_keys(config.auth_keys_file);
    app.client_keys = p.client_keys.get();
  }
  TenantLimitOptions limits{config.tenant_max_concurrent, double(config.tenant_rate), double(config.tenant_burst)};
  if (limits.max_concurrent > 0 || limits.requests_per_second > 0) {
    p.tenant_limits = std::make_unique<TenantLimiter>(limits);
    app.tenant_limits = p.tenant_limits.get();
  }
  if (config.hot_hits > 0) {
    p.hot_keys = std::make_unique<HotKeys>(policy::HotKeyPolicy{config.hot_hits, config.hot_window});
    app.hot_keys = p.hot_keys.get();
  }
  if (config.audit_every > 0) {
    GreedyFallbackOptions fo{config.fallback, size_t(std::max<int64_t>(1, config.fallback_window)),
                             config.fallback_threshold};
    p.fallback = std::make_unique<GreedyFallback>(fo, [&metrics](const std::string& model, bool engaged) {
      metrics.fallback_active(model, engaged);
      if (engaged) spdlog::warn("greedy fallback engaged for model {}: audits mismatch too often", model);
      else spdlog::info("greedy fallback cleared for model {}", model);
    });
    app.fallback = p.fallback.get();
  }
  if (!config.audit_log.empty() || config.access_log) {
    AuditLogOptions lo;
    lo.path = config.audit_log;
    lo.capacity = size_t(std::max<int64_t>(1, config.audit_queue));
    lo.access_to_stderr = config.access_log;
    p.audit_log = std::make_unique<AuditLog>(std::move(lo));
    app.audit_log = p.audit_log.get();
    if (!config.audit_log.empty()) spdlog::info("audit log: {} (reopened on SIGHUP)", config.audit_log);
  }
  app.options.audit_prompts = config.audit_prompts;
  return p;
}

// SIGHUP reopens the audit log (logrotate); re-arms itself.
void install_reopen(net::signal_set& hup, AuditLog* log) {
  hup.async_wait([&hup, log](beast::error_code ec, int) {
    if (ec) return;
    if (log) log->reopen();
    spdlog::info("SIGHUP: audit log reopened");
    install_reopen(hup, log);
  });
}

// On the first SIGINT/SIGTERM: stop accepting, then stop the pool once the
// connections have drained or drain_timeout has passed.
void install_signals(net::signal_set& signals, IoPool& pool, Listeners listeners,
                     std::chrono::milliseconds drain_timeout) {
  signals.async_wait([&pool, listeners, drain_timeout](beast::error_code ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: draining (up to {} ms)", sig, drain_timeout.count());
    for (Server* s : listeners) s->begin_drain();
    wait_for_drain(pool, listeners, std::chrono::steady_clock::now() + drain_timeout);
  });
}

// [admin] listen: a second listener for /metrics and the admin endpoints,
// with the API listener's limits; null when the option is empty.
std::unique_ptr<Server> make_admin_server(const Config& config, IoPool& pool, ServerOptions so, Router& router) {
  if (config.admin_listen.empty()) return nullptr;
  split_listen(config.admin_listen, so.host, so.port);
  auto server = std::make_unique<Server>(pool, so, router);
  server->listen();
  spdlog::info("admin endpoints listening on {}:{}", so.host, server->port());
  return server;
}

}  // namespace

int run_serve(const Config& config, const LocalBackendFactory& make_local) {
  ServerOptions so = server_options(config);
  IoPool pool(so.io_threads);
  Metrics metrics;
  MemoryStore memory(MemoryStoreOptions{config.cache_bytes, std::chrono::seconds(config.cache_ttl)});
  CacheTiers tiers = make_cache_tiers(config, pool, metrics, memory);

  AppContext app;
  app.options.default_seed = config.default_seed;
  app.options.shared_cache = config.shared_cache;
  app.options.admin_token = config.admin_token;
  app.cors = CorsPolicy(cors_origins(config));
  apply_cache_policy(config, app.options);
  PolicyParts policy_parts = make_policy_parts(config, metrics, tiers.redis.get(), app);
  app.metrics = &metrics;
  app.memory = &memory;
  std::unique_ptr<RedisFlightLock> flight_lock = wire_cache(config, memory, tiers, app);
  std::unique_ptr<Backend> backend = make_backend(config, pool, make_local, app);
  std::unique_ptr<ReproAuditor> auditor = make_auditor(config, *backend, metrics, app);  // destroyed before the backend
  StatusBoard status(app);  // GET /reprox/v1/stats and /reprox/status
  app.status = &status;
  status.start(pool.main());

  const bool admin_apart = !config.admin_listen.empty();
  Router router(app, admin_apart ? Exposure::kApi : Exposure::kAll);
  Router admin_router(app, Exposure::kAdmin);
  Server server(pool, so, router);
  app.draining = [&server] { return server.draining(); };
  server.listen();
  spdlog::info("reprox listening on {}:{} ({})", so.host, server.port(),
               config.upstream.empty() ? "embedded engine" : "upstream " + config.upstream);
  std::unique_ptr<Server> admin_server = make_admin_server(config, pool, so, admin_router);

  net::signal_set signals(pool.main(), SIGINT, SIGTERM);
  Listeners listeners{&server};
  if (admin_server) listeners.push_back(admin_server.get());
  install_signals(signals, pool, listeners, so.drain_timeout);
  net::signal_set hup(pool.main(), SIGHUP);
  install_reopen(hup, app.audit_log);

  pool.run();
  // The drain is over or timed out: cut what is left, and run the closes and
  // cancellations that sets off, so no connection or generation in flight
  // outlives the objects it references (destroyed below, before the pool).
  for (Server* s : listeners) s->abort_connections();
  signals.cancel();
  hup.cancel();
  pool.finish(std::chrono::seconds(2));
  spdlog::info("reprox stopped");
  return 0;
}

}  // namespace reprox
