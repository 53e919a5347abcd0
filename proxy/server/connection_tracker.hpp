// Counts live connections (for the cap) and reaches them for a drain.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>
#include <unordered_map>

namespace reprox {

class HttpSession;

class ConnectionTracker {
 public:
  // Returns an id, or 0 when the cap is reached.
  uint64_t add(const std::shared_ptr<HttpSession>& session, size_t cap);
  void remove(uint64_t id);
  size_t count() const;
  // Marks draining and asks every session to close when idle.
  void drain_all();
  // Asks every session to close at once.
  void abort_all();
  bool draining() const { return draining_.load(std::memory_order_relaxed); }

 private:
  std::vector<std::shared_ptr<HttpSession>> live() const;

  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, std::weak_ptr<HttpSession>> sessions_;
  uint64_t next_id_ = 1;
  std::atomic<bool> draining_{false};
};

}  // namespace reprox
