#include "proxy/app/stats_window.hpp"

#include <algorithm>

namespace reprox {

namespace {

StatsDelta between(const StatsSample& from, const StatsSample& to) {
  StatsDelta d;
  d.span_s = std::max(0.0, to.t - from.t);
  // Counters never go back; max() guards against a sample from a reset.
  for (size_t i = 0; i < kStatCounters; ++i) d.v[i] = std::max(0.0, to.v[i] - from.v[i]);
  return d;
}

}  // namespace

double StatsDelta::hit_rate() const {
  const double all = lookups();
  return all > 0 ? (v[kStatHit] + v[kStatNearHit]) / all : -1;
}

StatsWindow::StatsWindow(size_t capacity) : ring_(std::max<size_t>(1, capacity)) {}

void StatsWindow::add(const StatsSample& sample) {
  if (size_ < ring_.size()) {
    ring_[(first_ + size_++) % ring_.size()] = sample;
  } else {
    ring_[first_] = sample;
    first_ = (first_ + 1) % ring_.size();
  }
}

const StatsSample& StatsWindow::at(size_t i) const { return ring_[(first_ + i) % ring_.size()]; }

size_t StatsWindow::count_at_or_before(double t) const {
  // Samples are in time order: binary search for the first one after t.
  size_t lo = 0, hi = size_;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (at(mid).t <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const StatsSample* StatsWindow::at_or_before(double t) const {
  size_t n = count_at_or_before(t);
  return n == 0 ? nullptr : &at(n - 1);
}

StatsDelta StatsWindow::delta(const StatsSample& live, double window_s) const {
  if (size_ == 0) return StatsDelta{};
  const double since = live.t - window_s;
  // The oldest sample at or after `since`; the newest when none is that young.
  size_t index = count_at_or_before(since);
  if (index > 0 && at(index - 1).t == since) --index;
  if (index >= size_) index = size_ - 1;
  return between(at(index), live);
}

std::vector<StatsDelta> StatsWindow::history(const StatsSample& live, double step_s, size_t points) const {
  std::vector<StatsDelta> out(points);
  if (size_ == 0 || step_s <= 0) return out;
  const StatsSample& first = at(0);
  for (size_t k = 0; k < points; ++k) {
    const double end = live.t - double(points - 1 - k) * step_s;
    const double start = end - step_s;
    if (end <= first.t) continue;  // before the first sample: absent
    const StatsSample* from = at_or_before(start);
    if (!from) from = &first;
    const StatsSample* to = k + 1 == points ? &live : at_or_before(end);
    if (!to || to->t <= from->t) continue;
    out[k] = between(*from, *to);
  }
  return out;
}

}  // namespace reprox
