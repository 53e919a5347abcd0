// Test inputs for the sampler tests: reproducible pseudo-random logits and a
// double-precision reference softmax (std::exp, independent of det_exp).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace reprox::engine::testing {

// Uniform in [low, high), from mt19937 (whose output the standard fixes).
inline std::vector<float> random_logits(int32_t vocab, uint32_t seed, float low = -5.0f,
                                        float high = 5.0f) {
  std::mt19937 generator(seed);
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (auto& value : logits) {
    const double unit = static_cast<double>(generator() >> 8) / 16777216.0;
    value = static_cast<float>(low + (high - low) * unit);
  }
  return logits;
}

inline std::vector<double> reference_softmax(const std::vector<double>& x) {
  double max_value = -INFINITY;
  for (double v : x) max_value = std::max(max_value, v);
  double sum = 0.0;
  std::vector<double> p(x.size());
  for (size_t i = 0; i < x.size(); ++i) sum += p[i] = std::exp(x[i] - max_value);
  for (auto& v : p) v /= sum;
  return p;
}

}  // namespace reprox::engine::testing
