// exp_shifted (the sampler's row softmax): the AVX-512 and AVX2 paths give
// the bits of the scalar exp_inline for every element, including the edge
// cases.
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

using ExpPath = void (*)(const double*, int64_t, double, double*);

void expect_scalar_bits(ExpPath path) {
  const std::vector<double> x = inputs();
  for (double shift : {0.0, 3.25, -12.0}) {
    for (size_t n : {x.size(), size_t{1}, size_t{3}, size_t{7}, size_t{9}, size_t{23}}) {
      std::vector<double> want(n), got(n, -1.0);
      exp_shifted_scalar(x.data(), static_cast<int64_t>(n), shift, want.data());
      path(x.data(), static_cast<int64_t>(n), shift, got.data());
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(want[i], got[i])) << "x=" << x[i] << " shift=" << shift;
    }
  }
}

TEST(ExpBatch, Avx512PathHasTheScalarBits) {
  if (kernels::best_isa() != kernels::Isa::kAvx512) GTEST_SKIP() << "no AVX-512";
  expect_scalar_bits(exp_shifted_avx512);
}

TEST(ExpBatch, Avx2PathHasTheScalarBits) {
  if (kernels::best_isa() == kernels::Isa::kScalar) GTEST_SKIP() << "no AVX2";
  expect_scalar_bits(exp_shifted_avx2);
}

TEST(ExpBatch, InPlaceMatchesOutOfPlaceOnEveryIsa) {
  const std::vector<double> x = inputs();
  std::vector<double> want(x.size());
  exp_shifted_scalar(x.data(), static_cast<int64_t>(x.size()), 1.5, want.data());
  const kernels::Isa saved = kernels::active_isa();
  for (kernels::Isa isa : {kernels::Isa::kScalar, kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
    if (kernels::set_isa(isa) != isa) continue;  // this CPU lacks it
    std::vector<double> y = x;
    exp_shifted(y.data(), static_cast<int64_t>(y.size()), 1.5, y.data());
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_TRUE(same_bits(want[i], y[i])) << kernels::isa_name(isa) << " element " << i;
    }
  }
  kernels::set_isa(saved);
}

}  // namespace
}  // namespace reprox::engine::internal
