// The greedy fallback's evidence: the outcomes of the last W reproducibility
// audits of one model, and the rule that engages the fallback. A value
// type; the proxy keeps one per model and takes its own lock around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reprox::policy {

class AuditWindow {
 public:
  explicit AuditWindow(size_t capacity);

  // Records one audit; the oldest falls out once the window is full.
  void record(bool mismatch);
  void clear();

  size_t capacity() const { return ring_.size(); }
  size_t size() const { return count_; }
  size_t mismatches() const { return mismatches_; }
  bool full() const { return count_ == ring_.size(); }
  double mismatch_rate() const { return count_ == 0 ? 0.0 : double(mismatches_) / double(count_); }

 private:
  std::vector<uint8_t> ring_;  // 1 = mismatch
  size_t next_ = 0, count_ = 0, mismatches_ = 0;
};

// True when a full window's mismatch rate is above `threshold` (a fraction,
// e.g. 0.05): new misses of that model are then generated greedily.
bool fallback_engages(const AuditWindow& window, double threshold);

}  // namespace reprox::policy
