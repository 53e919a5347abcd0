#pragma once
// A deterministic normal generator: splitmix64 uniforms through Box-Muller.
// The sequence depends only on the seed (no libc or libtorch RNG involved).
#include <cmath>
#include <cstdint>

namespace reprox::engine {

class RandomNormal {
 public:
  explicit RandomNormal(uint64_t seed) : state_(seed) {}

  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in (0, 1]: 53 random bits, never zero (log-safe).
  double next_uniform() { return (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53; }

  double next_normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(next_uniform()));
    const double angle = 2.0 * M_PI * next_uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace reprox::engine
