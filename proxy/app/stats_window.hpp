// Sliding windows over monotonic counters, for the status page: a bounded
// ring of timed samples of the totals (requests by cache status, tokens),
// from which the counts and rates of the last minute, 5 or 15 minutes and a
// short history are derived against the live totals.
//
// Contract: add() takes samples in non-decreasing time; the ring keeps the
// newest `capacity` of them. delta(live, window_s) compares `live` with the
// oldest sample no older than live.t - window_s (the oldest kept sample when
// the ring is younger than the window): span_s is then at most window_s
// (when no sample is that young, the newest one serves, over a longer span).
// history() cuts the last `points * step_s` seconds into `points` steps,
// oldest first; a step before the first sample is absent (span_s 0).
//
// Threading: none; the owner (StatusBoard) locks around it.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace reprox {

// The counters a sample holds, in this order.
enum StatCounter : size_t {
  kStatHit,
  kStatNearHit,
  kStatMiss,
  kStatBypass,
  kStatCoalesced,
  kStatGeneratedTokens,
  kStatKvReusedTokens,
  kStatCounters
};

struct StatsSample {
  double t = 0;  // seconds, on one steady clock
  std::array<double, kStatCounters> v{};
};

// What the counters did over `span_s` seconds.
struct StatsDelta {
  double span_s = 0;
  std::array<double, kStatCounters> v{};
  double lookups() const { return v[kStatHit] + v[kStatNearHit] + v[kStatMiss] + v[kStatBypass] + v[kStatCoalesced]; }
  // Hits and near-hits over every lookup; < 0 when there was none.
  double hit_rate() const;
  // v[i] per second; 0 over an empty span.
  double per_s(size_t i) const { return span_s > 0 ? v[i] / span_s : 0; }
};

class StatsWindow {
 public:
  explicit StatsWindow(size_t capacity);

  void add(const StatsSample& sample);
  StatsDelta delta(const StatsSample& live, double window_s) const;
  std::vector<StatsDelta> history(const StatsSample& live, double step_s, size_t points) const;
  size_t size() const { return size_; }

 private:
  const StatsSample& at(size_t i) const;  // 0: the oldest kept
  size_t count_at_or_before(double t) const;  // samples with time <= t
  // The newest sample at or before `t`, else null.
  const StatsSample* at_or_before(double t) const;

  std::vector<StatsSample> ring_;
  size_t first_ = 0;  // the oldest sample's slot
  size_t size_ = 0;
};

}  // namespace reprox
