#pragma once
// Helpers shared by the kernel tests: weight shapes, seeded random buffers,
// bitwise comparison, and a guard that restores the ISA / thread settings.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "engine/kernels/kernels.hpp"

namespace reprox::kernels::test {

// A linear's weight shape: k inputs, n outputs.
struct Shape {
  int64_t k, n;
};

inline std::vector<float> random_vec(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// n may be 0 with an empty vector's null data(): memcmp must not see it.
inline bool same_bits(const float* a, const float* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

// The ISAs this CPU can run, scalar first.
inline std::vector<Isa> runnable_isas() {
  std::vector<Isa> out{Isa::kScalar};
  if (static_cast<int>(best_isa()) >= static_cast<int>(Isa::kAvx2)) out.push_back(Isa::kAvx2);
  if (best_isa() == Isa::kAvx512) out.push_back(Isa::kAvx512);
  return out;
}

class SettingsGuard {
 public:
  SettingsGuard() : isa_(active_isa()), threads_(num_threads()) {}
  ~SettingsGuard() {
    set_isa(isa_);
    set_num_threads(threads_);
  }

 private:
  Isa isa_;
  int threads_;
};

}  // namespace reprox::kernels::test
