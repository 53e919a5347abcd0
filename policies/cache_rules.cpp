#include "policies/cache_rules.hpp"

#include <fnmatch.h>

#include <algorithm>

namespace reprox::policy {

bool glob_matches(const std::string& pattern, std::string_view text) {
  if (pattern == "*") return true;
  return fnmatch(pattern.c_str(), std::string(text).c_str(), 0) == 0;
}

const CacheRule& match_rule(const std::vector<CacheRule>& rules, const CacheRule& fallback,
                            const RuleSubject& s) {
  for (const CacheRule& r : rules)
    if (glob_matches(r.model, s.model) && glob_matches(r.ns, s.ns) && glob_matches(r.tenant, s.tenant) &&
        glob_matches(r.route, s.route))
      return r;
  return fallback;
}

TtlDecision effective_ttl(const CacheRule& rule, const api::CacheDirectives& d) {
  const int64_t cap = std::max<int64_t>(0, rule.max_ttl_s);
  TtlDecision out;
  out.ttl_s = std::min(rule.ttl_s, cap);
  out.why = "rule " + rule.name + ": ttl " + std::to_string(rule.ttl_s) + "s";
  if (rule.ttl_s > cap) out.why += ", capped at max_ttl " + std::to_string(cap) + "s";
  if (d.ttl_seconds) {
    out.ttl_s = std::min(std::max<int64_t>(0, *d.ttl_seconds), cap);
    out.why += "; cache.ttl " + std::to_string(*d.ttl_seconds) + "s";
    if (*d.ttl_seconds > cap) out.why += " capped at max_ttl " + std::to_string(cap) + "s";
  }
  if (d.max_age_seconds && *d.max_age_seconds > 0 && *d.max_age_seconds < out.ttl_s) {
    out.ttl_s = std::max<int64_t>(0, *d.max_age_seconds);
    out.why += "; max-age=" + std::to_string(*d.max_age_seconds) + " shortens it";
  }
  out.why += " -> " + std::to_string(out.ttl_s) + "s";
  return out;
}

bool record_hit(HotCounter& c, int64_t now_ms, const HotKeyPolicy& p) {
  if (p.hits <= 0) return false;
  if (c.hits == 0 || now_ms - c.window_start_ms >= p.window_s * 1000) {
    c.window_start_ms = now_ms;
    c.hits = 0;
  }
  ++c.hits;
  if (c.hits != uint64_t(p.hits)) return false;
  ++c.steps;
  return true;
}

int64_t hot_ttl_seconds(int64_t base_ttl_s, uint32_t steps, int64_t max_ttl_s) {
  int64_t ttl = std::max<int64_t>(1, base_ttl_s);
  for (uint32_t i = 0; i < steps && ttl < max_ttl_s; ++i) ttl *= 2;
  return std::min(std::max(base_ttl_s, ttl), max_ttl_s);
}

}  // namespace reprox::policy
