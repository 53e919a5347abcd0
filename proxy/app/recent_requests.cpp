#include "proxy/app/recent_requests.hpp"

#include <algorithm>
#include <cstring>

namespace reprox {

namespace {

// Copies at most N-1 bytes of `s` and terminates.
template <size_t N>
void copy_field(char (&dst)[N], std::string_view s) {
  const size_t n = std::min(s.size(), N - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

}  // namespace

RecentRequests::RecentRequests(size_t capacity) : ring_(std::max<size_t>(1, capacity)) {}

void RecentRequests::record(int64_t time_ms, double latency_ms, std::string_view tenant, std::string_view key,
                            int status, std::string_view cache, std::string_view tier) {
  // Built outside the lock; the lock covers one copy and two indices.
  RecentRequest e;
  e.time_ms = time_ms;
  e.latency_ms = latency_ms;
  e.status = status;
  copy_field(e.tenant, tenant);
  copy_field(e.key, key);
  copy_field(e.cache, cache);
  copy_field(e.tier, tier);
  std::lock_guard lock(mutex_);
  ring_[next_] = e;
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

std::vector<RecentRequest> RecentRequests::newest_first() const {
  std::vector<RecentRequest> out;
  out.reserve(ring_.size());
  std::lock_guard lock(mutex_);
  for (size_t i = 1; i <= size_; ++i) out.push_back(ring_[(next_ + ring_.size() - i) % ring_.size()]);
  return out;
}

}  // namespace reprox
