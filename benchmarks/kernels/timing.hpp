// Timing for the kernel benchmarks: the median seconds per call.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace reprox::bench {

// Median seconds per call over `reps` batches, each batch running at least
// `min_batch_s`; one untimed call first (warm caches, first-touch pages).
inline double time_call(const std::function<void()>& fn, double min_batch_s = 0.05, int reps = 5) {
  using Clock = std::chrono::steady_clock;
  fn();
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    int iters = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      fn();
      ++iters;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_batch_s);
    per_call.push_back(elapsed / iters);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace reprox::bench
