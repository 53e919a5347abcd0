#include "policies/explain.hpp"

#include "common/json.hpp"

namespace reprox::policy {

std::string explain_json(const KeyResult& key, const Cacheability& c) {
  json::Object o;
  o.emplace_back("key", key.key);
  o.emplace_back("canonical", key.canonical);
  o.emplace_back("seed", key.seed);
  o.emplace_back("seed_injected", key.seed_injected);
  o.emplace_back("cacheable", c.readable || c.writable);
  o.emplace_back("reason", c.reason);
  return json::dump(json::Value(std::move(o)));
}

}  // namespace reprox::policy
