// The metrics named in interface.md, on one prometheus-cpp registry that
// the server renders at GET /metrics (same port, no second server).
// Thread-safe: prometheus-cpp metrics are atomic; label lookups are cached.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace reprox {

class Metrics {
 public:
  Metrics();

  void request(std::string_view endpoint, int code);
  void lookup(const char* result);  // hit | miss | bypass | coalesced
  void seed_injected() { seed_injected_->Increment(); }
  void request_duration(const char* cache, double seconds);
  void time_to_first_token(double seconds) { ttft_->Observe(seconds); }
  void tokens(int64_t prompt, int64_t generated, int64_t kv_reused);
  void store_error(const std::string& tier, const std::string& op);
  void invalidations(double n) { invalidations_->Increment(n); }
  void audit(bool match) { (match ? audit_match_ : audit_mismatch_)->Increment(); }
  // Hot keys: an entry's TTL extended; the TTL an entry had left when hit.
  void ttl_extension() { ttl_extensions_->Increment(); }
  void ttl_remaining_at_hit(double seconds) { ttl_remaining_->Observe(seconds); }
  // Near-duplicate matching: a near-hit served (and its similarity); a
  // shadow outcome (same | different | vetoed | none) with the answers'
  // token similarity when there was a would-be near-hit (else < 0).
  void near_hit(double similarity);
  // A chat request refused by a tenant limit ("concurrency" | "rate");
  // labelled by the tenant's first 8 hex digits, at most 100 tenants
  // (then "other").
  void tenant_rejection(const char* reason, const std::string& tenant);
  void near_shadow(const char* outcome, double answer_similarity);
  // The greedy fallback's state per model (1 engaged, 0 not).
  void fallback_active(const std::string& model, bool engaged);
  // The audit log's totals, refreshed before each scrape.
  void audit_log_state(double written_total, double dropped_total);
  // Tier gauges and eviction totals, refreshed before each scrape.
  void tier_state(const std::string& tier, double entries, double bytes, double evictions_total);

  // KV reuse state of the engine, refreshed before each scrape.
  void kv_state(double bytes_held, double cached_blocks, double evictions_total, double lookups_total,
                double hits_total);

  // The engine's continuous batching, refreshed before each scrape: sequences
  // running and waiting now, and totals of model passes, rows computed in
  // them (rows / passes = mean batch size), preemptions, and guided-decoding
  // masks computed (not found cached).
  void batch_state(double running, double waiting, double passes_total, double rows_total, double preemptions_total,
                   double kv_slots_free, double guide_mask_walks_total);

  std::string render() const;  // Prometheus text format

  // Read-only values for the status page (GET /reprox/v1/stats): counters
  // now, gauges as of their last *_state() call. Any thread.
  struct Readout {
    double hit = 0, near_hit = 0, miss = 0, bypass = 0, coalesced = 0;  // cache lookups
    double generated_tokens = 0, kv_reused_tokens = 0;
    double kv_bytes = 0, engine_running = 0, engine_waiting = 0;
    double memory_entries = 0, memory_bytes = 0, redis_entries = 0, redis_bytes = 0;
  };
  Readout readout() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Counter>* lookups_;
  prometheus::Family<prometheus::Gauge>* entries_;
  prometheus::Family<prometheus::Gauge>* bytes_;
  prometheus::Family<prometheus::Counter>* evictions_;
  prometheus::Family<prometheus::Counter>* store_errors_;
  prometheus::Family<prometheus::Histogram>* duration_;
  prometheus::Counter* invalidations_;
  prometheus::Counter* seed_injected_;
  prometheus::Histogram* ttft_;
  prometheus::Counter* prompt_tokens_;
  prometheus::Counter* generated_tokens_;
  prometheus::Counter* kv_reused_tokens_;
  prometheus::Gauge* kv_bytes_;
  prometheus::Gauge* kv_blocks_;
  prometheus::Counter* kv_evictions_;
  prometheus::Counter* kv_lookups_;
  prometheus::Counter* kv_hits_;
  double kv_seen_[3] = {0, 0, 0};  // evictions, lookups, hits already counted
  prometheus::Gauge* batch_running_;
  prometheus::Gauge* batch_waiting_;
  prometheus::Gauge* kv_slots_free_;
  prometheus::Counter* batch_passes_;
  prometheus::Counter* batch_rows_;
  prometheus::Counter* batch_preemptions_;
  prometheus::Counter* guide_mask_walks_;
  double batch_seen_[4] = {0, 0, 0, 0};  // passes, rows, preemptions, mask walks already counted
  prometheus::Family<prometheus::Counter>* tenant_rejections_;
  std::map<std::string, int> tenant_labels_;  // guarded by mutex_
  prometheus::Counter* near_hits_;
  prometheus::Counter* near_hit_lookups_;
  prometheus::Histogram* near_similarity_;
  prometheus::Family<prometheus::Counter>* near_shadow_;
  prometheus::Histogram* near_answer_similarity_;
  prometheus::Counter* ttl_extensions_;
  prometheus::Histogram* ttl_remaining_;
  prometheus::Family<prometheus::Gauge>* fallback_active_;
  prometheus::Counter* audit_log_lines_;
  prometheus::Counter* audit_log_dropped_;
  double audit_log_seen_[2] = {0, 0};  // written, dropped already counted
  prometheus::Counter* audit_match_;
  prometheus::Counter* audit_mismatch_;
  prometheus::Counter* hit_;
  prometheus::Counter* miss_;
  prometheus::Counter* bypass_;
  prometheus::Counter* coalesced_;

  const uint64_t id_;  // a serial per instance (see ThreadSeries in metrics.cpp)
  std::mutex mutex_;  // guards the label caches below
  std::map<std::pair<std::string, int>, prometheus::Counter*> request_cache_;
  std::map<std::string, prometheus::Histogram*> duration_cache_;
  std::map<std::string, double> evictions_seen_;
};

}  // namespace reprox
