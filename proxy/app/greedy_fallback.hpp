// The greedy fallback: the safety net for a model whose answers stop being
// reproducible. The auditor reports every audit's outcome here; when the
// mismatch rate over a model's last `window` audits (a full window) goes
// above `threshold`, the fallback engages for that model: new requests for
// it are keyed and generated with temperature 0 (mode "greedy-fallback")
// until an operator clears it. Answers under it carry x-reprox-fallback:
// greedy and /healthz reports "degraded".
//
// Thread-safe. engaged() is read on every request that misses the
// prepared-request memo; version() on every request (one atomic load), and
// it changes whenever any model's state does, so memoized decisions are
// taken again.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "policies/fallback_window.hpp"

namespace reprox {

struct GreedyFallbackOptions {
  bool enabled = true;      // false: audits are counted, nothing engages
  size_t window = 200;      // audits per model
  double threshold = 0.05;  // mismatch rate over a full window
};

class GreedyFallback {
 public:
  // `on_change(model, engaged)` runs (under no lock of this class) when a
  // model's fallback engages or is cleared: the gauge and the log.
  GreedyFallback(GreedyFallbackOptions options, std::function<void(const std::string&, bool)> on_change);

  void record(const std::string& model, bool mismatch);
  bool engaged(const std::string& model) const;
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // Ends the fallback and empties the audit window of `model`, or of every
  // model when `model` is empty. Returns the models whose fallback ended.
  std::vector<std::string> clear(const std::string& model);
  // "" when no model is in fallback; else e.g. "greedy fallback: m (12/200 audits mismatched)".
  std::string health_reason() const;

 private:
  struct ModelState {
    policy::AuditWindow window;
    bool engaged = false;
    size_t mismatches_at_engage = 0;
  };
  const GreedyFallbackOptions options_;
  const std::function<void(const std::string&, bool)> on_change_;
  mutable std::mutex mutex_;
  std::map<std::string, ModelState> models_;
  std::atomic<uint64_t> version_{0};
  std::atomic<size_t> engaged_count_{0};
};

}  // namespace reprox
