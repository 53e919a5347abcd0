// What request handlers share: configuration and the long-lived parts.
// Everything here outlives the server's io_context threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "policies/cache_policy.hpp"
#include "policies/cache_rules.hpp"
#include "proxy/app/audit_log.hpp"
#include "proxy/app/cors.hpp"
#include "proxy/app/greedy_fallback.hpp"
#include "proxy/app/repro_auditor.hpp"
#include "proxy/app/tenant_limits.hpp"
#include "proxy/backend/backend.hpp"
#include "proxy/cache/cache_store.hpp"
#include "proxy/cache/hot_keys.hpp"
#include "proxy/cache/near_index.hpp"
#include "proxy/cache/memory_store.hpp"
#include "proxy/cache/redis/redis_flight_lock.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "proxy/cache/single_flight.hpp"
#include "proxy/metrics/metrics.hpp"
#include "proxy/server/http_types.hpp"

namespace reprox {

class StatusBoard;

struct AppOptions {
  uint64_t default_seed = 42;
  bool shared_cache = false;  // true: one cache across bearer tokens (tenant "")
  std::string admin_token;    // empty: admin endpoints refused
  // [[cache.rule]] in file order, and the rule that governs when none
  // matches (ttl = [cache] ttl). Fixed for the process: PreparedChat points
  // into them.
  std::vector<policy::CacheRule> rules;
  policy::CacheRule default_rule;
  policy::ResponsePolicy response_policy;  // what finished answers are stored
  bool audit_prompts = false;              // the audit log includes the messages
};

// Engine text endpoints (/tokenize, /detokenize, /apply-template): returns
// the status and JSON body. Implemented by the local engine backend.
class TextEndpoints {
 public:
  virtual ~TextEndpoints() = default;
  virtual std::pair<int, std::string> call(const std::string& path, const std::string& body) = 0;
};

// Forwards a request unchanged to the upstream (other paths).
using ForwardFn = std::function<void(Request&&, std::function<void(Response&&)>)>;

struct AppContext {
  AppOptions options;
  Backend* backend = nullptr;
  CacheStore* store = nullptr;          // the tier chain the chat path uses
  MemoryStore* memory = nullptr;        // for stats and purge
  Metrics* metrics = nullptr;
  SingleFlight flights;
  TextEndpoints* text = nullptr;        // null with an upstream
  // Cross-instance single-flight (with --redis); null otherwise.
  RedisFlightLock* flight_lock = nullptr;
  // Invalidation by model, namespace or all; `done` gets the entries removed
  // here and whether the shared tier took the purge. Any thread.
  std::function<void(const PurgeScope&, std::function<void(uint64_t, bool)>)> purge;
  ForwardFn forward;                    // empty without an upstream
  CorsPolicy cors;                      // [server] cors_origins; off by default
  ReproAuditor* auditor = nullptr;      // null: no reproducibility audits
  GreedyFallback* fallback = nullptr;   // null: never falls back (no audits)
  HotKeys* hot_keys = nullptr;          // null: hot-key extension off
  NearIndex* near_index = nullptr;      // null: no rule has near matching on
  TenantLimiter* tenant_limits = nullptr;  // null: no per-tenant limits
  // [auth] keys_file: the hex SHA-256 of every allowed client key; null:
  // every client may call the API. Fixed for the process.
  const std::unordered_set<std::string>* client_keys = nullptr;
  AuditLog* audit_log = nullptr;        // null: no audit or access log
  StatusBoard* status = nullptr;        // the status page's state; null: /reprox/v1/stats answers 404
  std::function<bool()> draining;       // healthz 503 while draining
  std::function<std::string()> health_detail;  // "ok" | "degraded"
  std::function<void(Metrics&)> before_scrape;  // backend state into metrics (KV reuse)
  // With --redis: true, and the Redis tier's gauges (from its background
  // count; never blocks, never fails) into metrics at scrape.
  bool shared_tier = false;
  std::function<void(Metrics&)> shared_tier_scrape;
};

}  // namespace reprox
