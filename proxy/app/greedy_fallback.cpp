#include "proxy/app/greedy_fallback.hpp"

namespace reprox {

GreedyFallback::GreedyFallback(GreedyFallbackOptions options, std::function<void(const std::string&, bool)> on_change)
    : options_(options), on_change_(std::move(on_change)) {}

void GreedyFallback::record(const std::string& model, bool mismatch) {
  bool engaged_now = false;
  {
    std::lock_guard lock(mutex_);
    auto it = models_.find(model);
    if (it == models_.end()) it = models_.emplace(model, ModelState{policy::AuditWindow(options_.window)}).first;
    ModelState& s = it->second;
    s.window.record(mismatch);
    if (options_.enabled && !s.engaged && policy::fallback_engages(s.window, options_.threshold)) {
      s.engaged = true;
      s.mismatches_at_engage = s.window.mismatches();
      engaged_now = true;
      ++engaged_count_;
      version_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
  if (engaged_now && on_change_) on_change_(model, true);
}

bool GreedyFallback::engaged(const std::string& model) const {
  if (engaged_count_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(mutex_);
  auto it = models_.find(model);
  return it != models_.end() && it->second.engaged;
}

std::vector<std::string> GreedyFallback::clear(const std::string& model) {
  std::vector<std::string> ended;
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, s] : models_) {
      if (!model.empty() && name != model) continue;
      if (s.engaged) {
        ended.push_back(name);
        --engaged_count_;
      }
      s.engaged = false;
      s.window.clear();
    }
    version_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (on_change_)
    for (const auto& name : ended) on_change_(name, false);
  return ended;
}

std::string GreedyFallback::health_reason() const {
  if (engaged_count_.load(std::memory_order_acquire) == 0) return "";
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, s] : models_) {
    if (!s.engaged) continue;
    out += out.empty() ? "greedy fallback: " : ", ";
    out += name + " (" + std::to_string(s.mismatches_at_engage) + "/" + std::to_string(s.window.capacity()) +
           " audits mismatched)";
  }
  return out;
}

}  // namespace reprox
