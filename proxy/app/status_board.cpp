#include "proxy/app/status_board.hpp"

#include <cmath>
#include <vector>

#include "common/json.hpp"

namespace reprox {

namespace {

// Samples enough to cover the longest window, plus slack for timer drift.
constexpr size_t kSamples = size_t(StatusBoard::kLongestWindowS) / 2 + 8;
constexpr double kHistoryStepS = 30;
constexpr size_t kHistoryPoints = 30;  // 15 minutes

struct Window {
  const char* name;
  double seconds;
};
constexpr Window kWindows[] = {{"1m", 60}, {"5m", 300}, {"15m", 900}};

// The cache statuses, as in x-reprox-cache, with their counters.
struct Status {
  const char* name;
  StatCounter counter;
};
constexpr Status kStatuses[] = {{"hit", kStatHit},
                                {"near-hit", kStatNearHit},
                                {"miss", kStatMiss},
                                {"bypass", kStatBypass},
                                {"coalesced", kStatCoalesced}};

void key(std::string& out, const char* name) {
  if (out.back() != '{' && out.back() != '[') out.push_back(',');
  json::write_string(out, name);
  out.push_back(':');
}

// A rate or a ratio, to 4 decimals (the page needs no more).
void number(std::string& out, double d) {
  json::write_number(out, std::round(d * 10000) / 10000);
}

void count(std::string& out, double d) { json::write_uint(out, d > 0 ? uint64_t(std::llround(d)) : 0); }

// {"hit": N, ..., "total": N}, as counts or per second.
void by_status(std::string& out, const StatsDelta& d, bool per_s) {
  out.push_back('{');
  for (const Status& s : kStatuses) {
    key(out, s.name);
    per_s ? number(out, d.per_s(s.counter)) : count(out, d.v[s.counter]);
  }
  key(out, "total");
  per_s ? number(out, d.span_s > 0 ? d.lookups() / d.span_s : 0) : count(out, d.lookups());
  out.push_back('}');
}

void hit_rate(std::string& out, const StatsDelta& d) {
  if (d.hit_rate() < 0) out += "null";
  else number(out, d.hit_rate());
}

void windows_json(std::string& out, const StatsWindow& window, const StatsSample& live) {
  out.push_back('{');
  for (const Window& w : kWindows) {
    const StatsDelta d = window.delta(live, w.seconds);
    key(out, w.name);
    out.push_back('{');
    key(out, "window_s");
    count(out, w.seconds);
    key(out, "span_s");
    number(out, d.span_s);
    key(out, "requests");
    by_status(out, d, false);
    key(out, "per_s");
    by_status(out, d, true);
    key(out, "hit_rate");
    hit_rate(out, d);
    key(out, "generated_tokens_per_s");
    number(out, d.per_s(kStatGeneratedTokens));
    key(out, "kv_reused_tokens_per_s");
    number(out, d.per_s(kStatKvReusedTokens));
    out.push_back('}');
  }
  out.push_back('}');
}

void history_json(std::string& out, const StatsWindow& window, const StatsSample& live) {
  const std::vector<StatsDelta> steps = window.history(live, kHistoryStepS, kHistoryPoints);
  out.push_back('{');
  key(out, "step_s");
  count(out, kHistoryStepS);
  key(out, "hit_rate");
  out.push_back('[');
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i) out.push_back(',');
    hit_rate(out, steps[i]);
  }
  out += "]";
  key(out, "requests_per_s");
  out.push_back('[');
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i) out.push_back(',');
    if (steps[i].span_s > 0) number(out, steps[i].lookups() / steps[i].span_s);
    else out += "null";
  }
  out += "]}";
}

// The engaged models named in GreedyFallback::health_reason():
// "greedy fallback: NAME (A/B audits mismatched), NAME (...)".
std::vector<std::string> fallback_models(std::string_view reason) {
  constexpr std::string_view prefix = "greedy fallback: ", tail = " audits mismatched)";
  std::vector<std::string> out;
  if (reason.substr(0, prefix.size()) != prefix) return out;
  reason.remove_prefix(prefix.size());
  for (size_t end; (end = reason.find(tail)) != std::string_view::npos;) {
    std::string_view entry = reason.substr(0, end);
    if (size_t open = entry.rfind(" ("); open != std::string_view::npos) out.emplace_back(entry.substr(0, open));
    reason.remove_prefix(end + tail.size());
    if (reason.substr(0, 2) == ", ") reason.remove_prefix(2);
  }
  return out;
}

void fallback_json(std::string& out, const GreedyFallback* fallback) {
  const std::string reason = fallback ? fallback->health_reason() : "";
  out += "{\"engaged\":";
  out += reason.empty() ? "false" : "true";
  key(out, "models");
  out.push_back('[');
  for (const std::string& m : fallback_models(reason)) {
    if (out.back() != '[') out.push_back(',');
    json::write_string(out, m);
  }
  out.push_back(']');
  key(out, "reason");
  json::write_string(out, reason);
  out.push_back('}');
}

void recent_json(std::string& out, const std::vector<RecentRequest>& recent) {
  out.push_back('[');
  for (const RecentRequest& r : recent) {
    if (out.back() != '[') out.push_back(',');
    out += "{\"time_ms\":";
    json::write_int(out, r.time_ms);
    key(out, "tenant");
    json::write_string(out, r.tenant);
    key(out, "key");
    json::write_string(out, r.key);
    key(out, "status");
    json::write_int(out, r.status);
    key(out, "cache");
    json::write_string(out, r.cache);
    key(out, "tier");
    json::write_string(out, r.tier);
    key(out, "latency_ms");
    json::write_number(out, std::round(r.latency_ms * 1000) / 1000);
    out.push_back('}');
  }
  out.push_back(']');
}

// "cache", "kv" and "engine": the gauges and their live totals.
void state_json(std::string& out, const AppContext& app, const Metrics::Readout& m, const StatsDelta& minute) {
  key(out, "cache");
  out += "{\"memory\":{\"entries\":";
  count(out, m.memory_entries);
  key(out, "bytes");
  count(out, m.memory_bytes);
  out += "}";
  key(out, "redis");
  if (app.shared_tier) {
    out += "{\"entries\":";
    count(out, m.redis_entries);
    key(out, "bytes");
    count(out, m.redis_bytes);
    key(out, "healthy");
    out += (!app.health_detail || app.health_detail() == "ok") ? "true}" : "false}";
  } else {
    out += "null";
  }
  out += "}";
  key(out, "kv");
  out += "{\"bytes\":";
  count(out, m.kv_bytes);
  key(out, "reused_tokens");
  count(out, m.kv_reused_tokens);
  out += "}";
  key(out, "engine");
  out += "{\"embedded\":";
  out += app.text ? "true" : "false";
  key(out, "running");
  count(out, m.engine_running);
  key(out, "waiting");
  count(out, m.engine_waiting);
  key(out, "generated_tokens");
  count(out, m.generated_tokens);
  key(out, "tokens_per_s");
  number(out, minute.per_s(kStatGeneratedTokens));
  out += "}";
}

}  // namespace

StatusBoard::StatusBoard(AppContext& app)
    : app_(app), started_(std::chrono::steady_clock::now()), window_(kSamples) {
  update_unix_offset();
  window_.add(sample_of(app_.metrics->readout()));  // t = 0: the totals the windows start from
}

void StatusBoard::update_unix_offset() {
  using namespace std::chrono;
  const int64_t steady_ms = duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  unix_offset_ms_.store(now_unix_ms() - steady_ms, std::memory_order_relaxed);
}

StatusBoard::~StatusBoard() {
  if (timer_) timer_->cancel();
}

double StatusBoard::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

StatsSample StatusBoard::sample_of(const Metrics::Readout& m) const {
  StatsSample s;
  s.t = now_s();
  s.v[kStatHit] = m.hit;
  s.v[kStatNearHit] = m.near_hit;
  s.v[kStatMiss] = m.miss;
  s.v[kStatBypass] = m.bypass;
  s.v[kStatCoalesced] = m.coalesced;
  s.v[kStatGeneratedTokens] = m.generated_tokens;
  s.v[kStatKvReusedTokens] = m.kv_reused_tokens;
  return s;
}

void StatusBoard::sample() {
  update_unix_offset();  // follows changes of the system clock
  const StatsSample s = sample_of(app_.metrics->readout());
  std::lock_guard lock(mutex_);
  window_.add(s);
}

void StatusBoard::start(net::io_context& io) {
  timer_ = std::make_unique<net::steady_timer>(io);
  arm();
}

void StatusBoard::arm() {
  timer_->expires_after(kSampleInterval);
  timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    sample();
    arm();
  });
}

std::string StatusBoard::stats_json() {
  // The gauges, refreshed as a /metrics scrape refreshes them.
  Metrics& metrics = *app_.metrics;
  if (app_.memory) {
    const MemoryStoreStats s = app_.memory->stats();
    metrics.tier_state("memory", double(s.entries), double(s.bytes), double(s.evictions));
  }
  if (app_.shared_tier_scrape) app_.shared_tier_scrape(metrics);
  if (app_.before_scrape) app_.before_scrape(metrics);
  const Metrics::Readout m = metrics.readout();
  const StatsSample live = sample_of(m);
  StatsDelta total;  // since the start: live against zero
  total.span_s = live.t;
  total.v = live.v;
  StatsDelta minute;
  std::string out = "{\"uptime_s\":";
  number(out, live.t);
  key(out, "now_ms");
  json::write_int(out, now_unix_ms());
  key(out, "sample_interval_s");
  count(out, double(kSampleInterval.count()));
  key(out, "totals");
  by_status(out, total, false);
  {
    std::lock_guard lock(mutex_);
    minute = window_.delta(live, kWindows[0].seconds);
    key(out, "windows");
    windows_json(out, window_, live);
    key(out, "history");
    history_json(out, window_, live);
  }
  state_json(out, app_, m, minute);
  key(out, "fallback");
  fallback_json(out, app_.fallback);
  key(out, "recent");
  recent_json(out, recent_.newest_first());
  out.push_back('}');
  return out;
}

}  // namespace reprox
