#include "proxy/cache/redis/redis_breaker.hpp"

#include <algorithm>

namespace reprox {

const char* to_string(BreakerState state) {
  switch (state) {
    case BreakerState::closed: return "closed";
    case BreakerState::open: return "open";
    case BreakerState::half_open: return "half_open";
  }
  return "unknown";
}

bool CircuitBreaker::allow() const {
  std::lock_guard lock(mutex_);
  return state_ == BreakerState::closed;
}

bool CircuitBreaker::try_probe(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (state_ != BreakerState::open || now < opened_at_ + cooldown_) return false;
  state_ = BreakerState::half_open;
  return true;
}

void CircuitBreaker::on_success() {
  std::lock_guard lock(mutex_);
  state_ = BreakerState::closed;
  failures_ = 0;
  cooldown_ = options_.cooldown;
}

void CircuitBreaker::on_failure(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  switch (state_) {
    case BreakerState::closed:
      if (++failures_ < options_.failure_threshold) return;
      break;
    case BreakerState::half_open:
      cooldown_ = std::min(cooldown_ * 2, options_.max_cooldown);
      break;
    case BreakerState::open:
      return;  // late failures of commands that started before it opened
  }
  state_ = BreakerState::open;
  opened_at_ = now;
}

BreakerState CircuitBreaker::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace reprox
