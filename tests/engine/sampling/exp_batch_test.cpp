// exp_shifted (the sampler's row softmax): the AVX-512 path gives the bits
// of the scalar exp_inline for every element, including the edge cases.
#include "engine/sampling/internal/exp_batch.hpp"

#include "engine/kernels/kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace reprox::engine::internal {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<double> inputs() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {0.0,   -0.0,   1.0,     -1.0,    -inf,         inf,     std::nan(""), -745.2,
                           -745.19, -745.21, 709.78, 709.79,  -708.4,       -708.3,  -707.7,       -744.9,
                           709.7,  -1e-300, 1e-300,  -30.5,   -88.7,        -103.9};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> wide(-800.0, 720.0), logits(-40.0, 5.0), tiny(-1e-3, 1e-3);
  for (int i = 0; i < 20000; ++i) x.push_back(wide(rng));
  for (int i = 0; i < 20000; ++i) x.push_back(logits(rng));
  for (int i = 0; i < 2000; ++i) x.push_back(tiny(rng));
  return x;
}

TEST(ExpBatch, VectorPathHasTheScalarBits) {
  const std::vector<double> x = inputs();
  for (double shift : {0.0, 3.25, -12.0}) {
    for (size_t n : {x.size(), size_t{1}, size_t{7}, size_t{9}, size_t{23}}) {
      std::vector<double> want(n), got(n, -1.0);
      exp_shifted_scalar(x.data(), static_cast<int64_t>(n), shift, want.data());
      if (kernels::best_isa() != kernels::Isa::kAvx512) GTEST_SKIP() << "no AVX-512";
      exp_shifted_avx512(x.data(), static_cast<int64_t>(n), shift, got.data());
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(want[i], got[i])) << "x=" << x[i] << " shift=" << shift;
    }
  }
}

TEST(ExpBatch, InPlaceMatchesOutOfPlace) {
  std::vector<double> x = inputs();
  std::vector<double> want(x.size());
  exp_shifted_scalar(x.data(), static_cast<int64_t>(x.size()), 1.5, want.data());
  exp_shifted(x.data(), static_cast<int64_t>(x.size()), 1.5, x.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_bits(want[i], x[i])) << i;
}

}  // namespace
}  // namespace reprox::engine::internal
