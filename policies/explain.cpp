#include "policies/explain.hpp"

#include "common/json.hpp"

namespace reprox::policy {

std::string explain_json(const Explanation& e) {
  json::Object o;
  o.emplace_back("key", e.key.key);
  o.emplace_back("canonical", e.key.canonical);
  o.emplace_back("seed", e.key.seed);
  o.emplace_back("seed_injected", e.key.seed_injected);
  o.emplace_back("cacheable", e.cacheability.readable || e.cacheability.writable);
  o.emplace_back("reason", e.cacheability.reason);
  if (e.rule) o.emplace_back("rule", e.rule->name);
  if (e.ttl) {
    o.emplace_back("ttl", e.ttl->ttl_s);
    o.emplace_back("ttl_reason", e.ttl->why);
  }
  if (!e.sampling_mode.empty()) o.emplace_back("mode", e.sampling_mode);
  for (const auto& member : e.extra) o.push_back(member);
  return json::dump(json::Value(std::move(o)));
}

}  // namespace reprox::policy
