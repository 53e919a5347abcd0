#include "proxy/server/connection_tracker.hpp"

#include <vector>

#include "proxy/server/http_session.hpp"

namespace reprox {

uint64_t ConnectionTracker::add(const std::shared_ptr<HttpSession>& session, size_t cap) {
  std::lock_guard lock(mutex_);
  if (sessions_.size() >= cap) return 0;
  uint64_t id = next_id_++;
  sessions_.emplace(id, session);
  return id;
}

void ConnectionTracker::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  sessions_.erase(id);
}

size_t ConnectionTracker::count() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::vector<std::shared_ptr<HttpSession>> ConnectionTracker::live() const {
  std::vector<std::shared_ptr<HttpSession>> out;
  std::lock_guard lock(mutex_);
  for (auto& [id, weak] : sessions_)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

void ConnectionTracker::drain_all() {
  draining_ = true;
  for (auto& s : live()) s->drain();
}

void ConnectionTracker::abort_all() {
  draining_ = true;
  for (auto& s : live()) s->abort();
}

}  // namespace reprox
