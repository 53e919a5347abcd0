#include "proxy/metrics/metrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string_view>

namespace reprox {

namespace {
const prometheus::Histogram::BucketBoundaries kLatencyBuckets{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

// Remaining TTL at a hit: a minute to a week.
const prometheus::Histogram::BucketBoundaries kTtlBuckets{60,    300,    900,    3600,   4 * 3600,
                                                           21600, 86400, 3 * 86400, 7 * 86400};

const prometheus::Histogram::BucketBoundaries kSimilarityBuckets{0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 1.0};

std::atomic<uint64_t> next_metrics_id{1};

// Per thread, the labelled series the thread used last, so that counting a
// request takes no lock shared with the other I/O threads (the locked maps
// are the fallback). A family never removes a series, so a kept pointer is
// valid while its Metrics lives; `owner` is the Metrics' serial, never an
// address a later instance could reuse, so a dead instance's slots never
// match again.
template <typename Series>
struct ThreadSeries {
  uint64_t owner = 0;
  int code = 0;
  std::string label;
  Series* series = nullptr;
};
}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()), id_(next_metrics_id++) {
  using namespace prometheus;
  requests_ = &BuildCounter().Name("reprox_requests_total").Help("HTTP requests by endpoint and status code").Register(*registry_);
  lookups_ = &BuildCounter().Name("reprox_cache_lookups_total").Help("Chat completion cache lookups by result").Register(*registry_);
  entries_ = &BuildGauge().Name("reprox_cache_entries").Help("Entries held per cache tier").Register(*registry_);
  bytes_ = &BuildGauge().Name("reprox_cache_bytes").Help("Bytes held per cache tier").Register(*registry_);
  evictions_ = &BuildCounter().Name("reprox_cache_evictions_total").Help("Entries evicted per cache tier").Register(*registry_);
  invalidations_ = &BuildCounter().Name("reprox_cache_invalidations_total").Help("Entries purged or expired").Register(*registry_).Add({});
  store_errors_ = &BuildCounter().Name("reprox_cache_store_errors_total").Help("Cache store failures and skipped writes").Register(*registry_);
  seed_injected_ = &BuildCounter().Name("reprox_seed_injected_total").Help("Requests that got the default seed").Register(*registry_).Add({});
  duration_ = &BuildHistogram().Name("reprox_request_duration_seconds").Help("Chat completion latency by cache result").Register(*registry_);
  ttft_ = &BuildHistogram().Name("reprox_time_to_first_token_seconds").Help("Time to the first generated token").Register(*registry_).Add({}, kLatencyBuckets);
  prompt_tokens_ = &BuildCounter().Name("reprox_prompt_tokens_total").Help("Prompt tokens of generations").Register(*registry_).Add({});
  generated_tokens_ = &BuildCounter().Name("reprox_generated_tokens_total").Help("Tokens generated").Register(*registry_).Add({});
  kv_reused_tokens_ = &BuildCounter().Name("reprox_kv_reused_tokens_total").Help("Prompt tokens served from reused KV").Register(*registry_).Add({});
  kv_bytes_ = &BuildGauge().Name("reprox_kv_bytes").Help("Bytes of KV kept for reuse across requests").Register(*registry_).Add({});
  kv_blocks_ = &BuildGauge().Name("reprox_kv_cached_blocks").Help("KV blocks kept for reuse").Register(*registry_).Add({});
  kv_evictions_ = &BuildCounter().Name("reprox_kv_evictions_total").Help("KV cache evictions (LRU, budget or per-user limit)").Register(*registry_).Add({});
  kv_lookups_ = &BuildCounter().Name("reprox_kv_lookups_total").Help("KV prefix lookups").Register(*registry_).Add({});
  kv_hits_ = &BuildCounter().Name("reprox_kv_hits_total").Help("KV prefix lookups that reused at least one block").Register(*registry_).Add({});
  batch_running_ = &BuildGauge().Name("reprox_engine_running_sequences").Help("Engine sequences (choices) with KV in the batch").Register(*registry_).Add({});
  batch_waiting_ = &BuildGauge().Name("reprox_engine_waiting_sequences").Help("Engine sequences waiting for admission").Register(*registry_).Add({});
  kv_slots_free_ = &BuildGauge().Name("reprox_engine_kv_slots_free").Help("Engine KV slots no running sequence holds (0 without KV slots)").Register(*registry_).Add({});
  batch_passes_ = &BuildCounter().Name("reprox_engine_passes_total").Help("Engine model passes (one per batch step)").Register(*registry_).Add({});
  batch_rows_ = &BuildCounter().Name("reprox_engine_batch_rows_total").Help("Sequences computed, summed over engine passes").Register(*registry_).Add({});
  batch_preemptions_ = &BuildCounter().Name("reprox_engine_preemptions_total").Help("Sequences preempted for KV working memory").Register(*registry_).Add({});
  guide_mask_walks_ = &BuildCounter().Name("reprox_engine_guide_mask_walks_total").Help("Guided-decoding token masks computed by walking the vocabulary, not found cached").Register(*registry_).Add({});
  tenant_rejections_ = &BuildCounter().Name("reprox_tenant_rejections_total").Help("Chat requests refused by a per-tenant limit").Register(*registry_);
  for (const char* reason : {"concurrency", "rate"}) tenant_rejections_->Add({{"reason", reason}, {"tenant", "other"}});
  near_hits_ = &BuildCounter().Name("reprox_cache_near_hits_total").Help("Exact misses answered from a near-duplicate entry").Register(*registry_).Add({});
  near_similarity_ = &BuildHistogram().Name("reprox_near_similarity").Help("Similarity of the last user messages of served near-hits").Register(*registry_).Add({}, kSimilarityBuckets);
  near_shadow_ = &BuildCounter().Name("reprox_near_shadow_total").Help("Shadow near matching: whether the would-be near-hit's answer was the same").Register(*registry_);
  for (const char* outcome : {"same", "different", "vetoed", "none"}) near_shadow_->Add({{"outcome", outcome}});
  near_answer_similarity_ = &BuildHistogram().Name("reprox_near_shadow_answer_similarity").Help("Token similarity of the generated answer and the would-be near-hit's").Register(*registry_).Add({}, kSimilarityBuckets);
  ttl_extensions_ = &BuildCounter().Name("reprox_cache_ttl_extensions_total").Help("Hot entries whose TTL was extended").Register(*registry_).Add({});
  ttl_remaining_ = &BuildHistogram().Name("reprox_cache_ttl_remaining_seconds").Help("TTL an entry had left when it was hit").Register(*registry_).Add({}, kTtlBuckets);
  fallback_active_ = &BuildGauge().Name("reprox_repro_fallback_active").Help("1 while a model's answers fall back to greedy decoding").Register(*registry_);
  audit_log_lines_ = &BuildCounter().Name("reprox_audit_log_lines_total").Help("Lines written to the audit log").Register(*registry_).Add({});
  audit_log_dropped_ = &BuildCounter().Name("reprox_audit_log_dropped_total").Help("Audit log lines dropped (queue full or file unwritable)").Register(*registry_).Add({});
  auto& audits = BuildCounter().Name("reprox_repro_audits_total").Help("Reproducibility audits by result").Register(*registry_);
  audit_match_ = &audits.Add({{"result", "match"}});
  audit_mismatch_ = &audits.Add({{"result", "mismatch"}});
  hit_ = &lookups_->Add({{"result", "hit"}});
  miss_ = &lookups_->Add({{"result", "miss"}});
  bypass_ = &lookups_->Add({{"result", "bypass"}});
  coalesced_ = &lookups_->Add({{"result", "coalesced"}});
  near_hit_lookups_ = &lookups_->Add({{"result", "near-hit"}});
  // Every family shows its known series from the start, at zero, so a
  // scrape lists each metric name even before the first event.
  for (const char* cache : {"hit", "miss", "bypass", "coalesced"})
    duration_cache_[cache] = &duration_->Add({{"cache", cache}}, kLatencyBuckets);
  for (const char* op : {"get", "put"}) store_errors_->Add({{"tier", "redis"}, {"op", op}});
  for (const char* tier : {"memory", "redis"}) {
    entries_->Add({{"tier", tier}});
    bytes_->Add({{"tier", tier}});
    evictions_->Add({{"tier", tier}});
  }
}

void Metrics::request(std::string_view endpoint, int code) {
  thread_local std::array<ThreadSeries<prometheus::Counter>, 16> mine;
  auto& t = mine[(std::hash<std::string_view>()(endpoint) + unsigned(code)) % mine.size()];
  if (t.owner != id_ || t.code != code || t.label != endpoint) {
    std::lock_guard lock(mutex_);
    auto& slot = request_cache_[{std::string(endpoint), code}];
    if (!slot) slot = &requests_->Add({{"endpoint", std::string(endpoint)}, {"code", std::to_string(code)}});
    t = {id_, code, std::string(endpoint), slot};
  }
  t.series->Increment();
}

void Metrics::lookup(const char* result) {
  if (!std::strcmp(result, "hit")) hit_->Increment();
  else if (!std::strcmp(result, "miss")) miss_->Increment();
  else if (!std::strcmp(result, "bypass")) bypass_->Increment();
  else if (!std::strcmp(result, "near-hit")) near_hit_lookups_->Increment();
  else coalesced_->Increment();
}

void Metrics::request_duration(const char* cache, double seconds) {
  thread_local std::array<ThreadSeries<prometheus::Histogram>, 8> mine;
  auto& t = mine[std::hash<std::string_view>()(cache) % mine.size()];
  if (t.owner != id_ || t.label != cache) {
    std::lock_guard lock(mutex_);
    auto& slot = duration_cache_[cache];
    if (!slot) slot = &duration_->Add({{"cache", cache}}, kLatencyBuckets);
    t = {id_, 0, cache, slot};
  }
  t.series->Observe(seconds);
}

void Metrics::tokens(int64_t prompt, int64_t generated, int64_t kv_reused) {
  prompt_tokens_->Increment(static_cast<double>(prompt));
  generated_tokens_->Increment(static_cast<double>(generated));
  kv_reused_tokens_->Increment(static_cast<double>(kv_reused));
}

void Metrics::store_error(const std::string& tier, const std::string& op) {
  store_errors_->Add({{"tier", tier}, {"op", op}}).Increment();
}

void Metrics::tier_state(const std::string& tier, double entries, double bytes, double evictions_total) {
  entries_->Add({{"tier", tier}}).Set(entries);
  bytes_->Add({{"tier", tier}}).Set(bytes);
  std::lock_guard lock(mutex_);
  double& seen = evictions_seen_[tier];
  if (evictions_total > seen) {
    evictions_->Add({{"tier", tier}}).Increment(evictions_total - seen);
    seen = evictions_total;
  }
}

void Metrics::kv_state(double bytes_held, double cached_blocks, double evictions_total, double lookups_total,
                       double hits_total) {
  kv_bytes_->Set(bytes_held);
  kv_blocks_->Set(cached_blocks);
  std::lock_guard lock(mutex_);
  prometheus::Counter* counters[3] = {kv_evictions_, kv_lookups_, kv_hits_};
  double totals[3] = {evictions_total, lookups_total, hits_total};
  for (int i = 0; i < 3; ++i) {
    if (totals[i] > kv_seen_[i]) counters[i]->Increment(totals[i] - kv_seen_[i]);
    kv_seen_[i] = std::max(kv_seen_[i], totals[i]);
  }
}

void Metrics::batch_state(double running, double waiting, double passes_total, double rows_total,
                          double preemptions_total, double kv_slots_free, double guide_mask_walks_total) {
  batch_running_->Set(running);
  batch_waiting_->Set(waiting);
  kv_slots_free_->Set(kv_slots_free);
  std::lock_guard lock(mutex_);
  prometheus::Counter* counters[4] = {batch_passes_, batch_rows_, batch_preemptions_, guide_mask_walks_};
  double totals[4] = {passes_total, rows_total, preemptions_total, guide_mask_walks_total};
  for (int i = 0; i < 4; ++i) {
    if (totals[i] > batch_seen_[i]) counters[i]->Increment(totals[i] - batch_seen_[i]);
    batch_seen_[i] = std::max(batch_seen_[i], totals[i]);
  }
}

void Metrics::tenant_rejection(const char* reason, const std::string& tenant) {
  std::string label = tenant.substr(0, 8);
  std::lock_guard lock(mutex_);
  if (!tenant_labels_.count(label)) {
    if (tenant_labels_.size() >= 100) label = "other";
    else tenant_labels_[label] = 1;
  }
  tenant_rejections_->Add({{"reason", reason}, {"tenant", label.empty() ? "none" : label}}).Increment();
}

void Metrics::near_hit(double similarity) {
  near_hits_->Increment();
  near_similarity_->Observe(similarity);
}

void Metrics::near_shadow(const char* outcome, double answer_similarity) {
  near_shadow_->Add({{"outcome", outcome}}).Increment();
  if (answer_similarity >= 0) near_answer_similarity_->Observe(answer_similarity);
}

void Metrics::fallback_active(const std::string& model, bool engaged) {
  fallback_active_->Add({{"model", model}}).Set(engaged ? 1 : 0);
}

void Metrics::audit_log_state(double written_total, double dropped_total) {
  std::lock_guard lock(mutex_);
  prometheus::Counter* counters[2] = {audit_log_lines_, audit_log_dropped_};
  double totals[2] = {written_total, dropped_total};
  for (int i = 0; i < 2; ++i) {
    if (totals[i] > audit_log_seen_[i]) counters[i]->Increment(totals[i] - audit_log_seen_[i]);
    audit_log_seen_[i] = std::max(audit_log_seen_[i], totals[i]);
  }
}

Metrics::Readout Metrics::readout() const {
  Readout r;
  r.hit = hit_->Value();
  r.near_hit = near_hit_lookups_->Value();
  r.miss = miss_->Value();
  r.bypass = bypass_->Value();
  r.coalesced = coalesced_->Value();
  r.generated_tokens = generated_tokens_->Value();
  r.kv_reused_tokens = kv_reused_tokens_->Value();
  r.kv_bytes = kv_bytes_->Value();
  r.engine_running = batch_running_->Value();
  r.engine_waiting = batch_waiting_->Value();
  r.memory_entries = entries_->Add({{"tier", "memory"}}).Value();
  r.memory_bytes = bytes_->Add({{"tier", "memory"}}).Value();
  r.redis_entries = entries_->Add({{"tier", "redis"}}).Value();
  r.redis_bytes = bytes_->Add({{"tier", "redis"}}).Value();
  return r;
}

std::string Metrics::render() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace reprox
