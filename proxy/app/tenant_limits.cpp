#include "proxy/app/tenant_limits.hpp"

#include <cmath>
#include <functional>

namespace reprox {

TenantLimiter::TenantLimiter(TenantLimitOptions options) : options_(options) {}

TenantLimiter::Admission TenantLimiter::admit(const std::string& tenant) {
  Admission out;
  if (!enabled()) {
    out.permit = std::make_shared<int>(0);
    return out;
  }
  Shard& shard = (*shards_)[std::hash<std::string>{}(tenant) % kShards];
  const int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::lock_guard lock(shard.mutex);
  if (shard.tenants.size() >= options_.max_tenants / kShards + 1) forget_idle_locked(shard);
  State& s = shard.tenants[tenant];
  if (options_.max_concurrent > 0 && s.in_flight >= options_.max_concurrent) {
    out.refusal = Refusal::concurrency;
    out.retry_after_s = 1;
    return out;
  }
  if (options_.requests_per_second > 0) {
    const double burst = std::max(1.0, options_.burst > 0 ? options_.burst : options_.requests_per_second);
    policy::TakeResult taken = policy::take_token(s.bucket, now_ns, options_.requests_per_second, burst);
    if (!taken.ok) {
      out.refusal = Refusal::rate;
      out.retry_after_s = std::max<int64_t>(1, int64_t(std::ceil(taken.wait_s)));
      return out;
    }
  }
  ++s.in_flight;
  // The permit gives the slot back when the last copy goes (any thread).
  out.permit = std::shared_ptr<void>(nullptr, [shards = shards_, &shard, tenant](void*) { release(shard, tenant); });
  return out;
}

void TenantLimiter::release(Shard& shard, const std::string& tenant) {
  std::lock_guard lock(shard.mutex);
  auto it = shard.tenants.find(tenant);
  if (it != shard.tenants.end() && it->second.in_flight > 0) --it->second.in_flight;
}

void TenantLimiter::forget_idle_locked(Shard& shard) {
  for (auto it = shard.tenants.begin(); it != shard.tenants.end();) {
    if (it->second.in_flight == 0) it = shard.tenants.erase(it);
    else ++it;
  }
}

}  // namespace reprox
