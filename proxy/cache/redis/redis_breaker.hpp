// The Redis tier's circuit breaker. Closed: commands run. After
// `failure_threshold` consecutive failures it opens: commands are refused
// at once (the store fails open to the memory tier). When the cool-down has
// passed, exactly one caller wins `try_probe()` (half-open); its success
// closes the breaker, its failure reopens it with a doubled cool-down (up
// to `max_cooldown`): that is the reconnect backoff.
// Thread-safe (one mutex; every call is O(1)).
#pragma once

#include <chrono>
#include <mutex>

namespace reprox {

enum class BreakerState { closed, open, half_open };

const char* to_string(BreakerState state);

struct BreakerOptions {
  int failure_threshold = 5;
  std::chrono::milliseconds cooldown{250};
  std::chrono::milliseconds max_cooldown{2000};
};

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  explicit CircuitBreaker(BreakerOptions options) : options_(options), cooldown_(options.cooldown) {}

  // True while closed: the command may run.
  bool allow() const;
  // True for the one caller that should probe now (open and cooled down).
  bool try_probe(Clock::time_point now = Clock::now());
  void on_success();
  void on_failure(Clock::time_point now = Clock::now());
  BreakerState state() const;

 private:
  const BreakerOptions options_;
  mutable std::mutex mutex_;
  BreakerState state_ = BreakerState::closed;
  int failures_ = 0;
  std::chrono::milliseconds cooldown_;
  Clock::time_point opened_at_{};
};

}  // namespace reprox
