#include "policies/fallback_window.hpp"

#include <algorithm>

namespace reprox::policy {

AuditWindow::AuditWindow(size_t capacity) : ring_(std::max<size_t>(1, capacity), 0) {}

void AuditWindow::record(bool mismatch) {
  if (full()) mismatches_ -= ring_[next_];
  else ++count_;
  ring_[next_] = mismatch ? 1 : 0;
  mismatches_ += ring_[next_];
  next_ = (next_ + 1) % ring_.size();
}

void AuditWindow::clear() {
  std::fill(ring_.begin(), ring_.end(), 0);
  next_ = count_ = mismatches_ = 0;
}

bool fallback_engages(const AuditWindow& w, double threshold) {
  return w.full() && w.mismatch_rate() > threshold;
}

}  // namespace reprox::policy
