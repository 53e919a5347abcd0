// linear(): row/batch invariance, thread and ISA invariance, accuracy vs a
// double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/engine/kernels/test_util.hpp"

namespace reprox::kernels::test {
namespace {

// Model shapes (hidden 576, MLP 1536, head dims 64/128) plus awkward tails.
const Shape kGemmShapes[] = {{576, 576}, {576, 1536}, {1536, 576}, {64, 128}, {128, 64},
                             {7, 5},     {33, 19},    {200, 37},   {1000, 29}};

std::vector<float> run_linear(const std::vector<float>& x, int64_t m, int64_t k, const std::vector<float>& w, int64_t n,
                              const float* bias) {
  std::vector<float> y(static_cast<size_t>(m * n), NAN);
  linear(x.data(), m, k, w.data(), n, bias, y.data());
  return y;
}

TEST(Gemm, RowAloneEqualsRowInsideRandomBatches) {
  std::mt19937 rng(11);
  for (const Shape& s : kGemmShapes) {
    const std::vector<float> w = random_vec(rng, s.k * s.n, 0.05f);
    const std::vector<float> bias = random_vec(rng, s.n);
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t m = std::uniform_int_distribution<int64_t>(2, 64)(rng);
      const std::vector<float> x = random_vec(rng, m * s.k);
      const float* b = trial % 2 == 0 ? bias.data() : nullptr;
      const std::vector<float> batch = run_linear(x, m, s.k, w, s.n, b);
      for (int64_t r = 0; r < m; ++r) {
        const std::vector<float> row(x.begin() + r * s.k, x.begin() + (r + 1) * s.k);
        const std::vector<float> alone = run_linear(row, 1, s.k, w, s.n, b);
        ASSERT_TRUE(same_bits(alone.data(), batch.data() + r * s.n, s.n))
            << "k=" << s.k << " n=" << s.n << " m=" << m << " row " << r;
      }
      // The same rows again at other batch positions (a shifted sub-batch).
      const int64_t off = std::uniform_int_distribution<int64_t>(0, m - 1)(rng);
      const std::vector<float> tail(x.begin() + off * s.k, x.end());
      const std::vector<float> shifted = run_linear(tail, m - off, s.k, w, s.n, b);
      ASSERT_TRUE(same_bits(shifted.data(), batch.data() + off * s.n, (m - off) * s.n));
    }
  }
}

TEST(Gemm, StridedInputAndOutputMatchContiguous) {
  std::mt19937 rng(12);
  const int64_t m = 9, k = 100, n = 40, xs = 131, ys = 57;
  const std::vector<float> w = random_vec(rng, k * n);
  std::vector<float> xpad = random_vec(rng, m * xs), x(m * k);
  for (int64_t r = 0; r < m; ++r) std::copy(xpad.begin() + r * xs, xpad.begin() + r * xs + k, x.begin() + r * k);
  const std::vector<float> dense = run_linear(x, m, k, w, n, nullptr);
  std::vector<float> ypad(m * ys, -7.0f);
  linear(xpad.data(), m, k, xs, w.data(), n, nullptr, ypad.data(), ys);
  for (int64_t r = 0; r < m; ++r) {
    ASSERT_TRUE(same_bits(dense.data() + r * n, ypad.data() + r * ys, n));
    for (int64_t c = n; c < ys; ++c) ASSERT_EQ(ypad[r * ys + c], -7.0f) << "wrote past n";
  }
}

TEST(Gemm, MatchesDoubleReference) {
  std::mt19937 rng(13);
  for (const Shape& s : kGemmShapes) {
    const int64_t m = 5;
    const std::vector<float> x = random_vec(rng, m * s.k), w = random_vec(rng, s.k * s.n), bias = random_vec(rng, s.n);
    const std::vector<float> y = run_linear(x, m, s.k, w, s.n, bias.data());
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < s.n; ++c) {
        double ref = bias[c], mag = std::fabs(bias[c]);
        for (int64_t i = 0; i < s.k; ++i) {
          ref += static_cast<double>(x[r * s.k + i]) * w[c * s.k + i];
          mag += std::fabs(static_cast<double>(x[r * s.k + i]) * w[c * s.k + i]);
        }
        ASSERT_NEAR(y[r * s.n + c], ref, 1e-6 * mag + 1e-30) << "k=" << s.k << " n=" << s.n;
      }
    }
  }
}

TEST(Gemm, ThreadCountDoesNotChangeBits) {
  SettingsGuard guard;
  std::mt19937 rng(14);
  for (const Shape& s : kGemmShapes) {
    for (int64_t m : {1, 3, 64}) {
      const std::vector<float> x = random_vec(rng, m * s.k), w = random_vec(rng, s.k * s.n);
      set_num_threads(1);
      const std::vector<float> one = run_linear(x, m, s.k, w, s.n, nullptr);
      set_num_threads(2);
      const std::vector<float> two = run_linear(x, m, s.k, w, s.n, nullptr);
      set_num_threads(3);
      const std::vector<float> three = run_linear(x, m, s.k, w, s.n, nullptr);
      ASSERT_TRUE(same_bits(one.data(), two.data(), one.size())) << "k=" << s.k << " n=" << s.n << " m=" << m;
      ASSERT_TRUE(same_bits(one.data(), three.data(), one.size()));
    }
  }
}

TEST(Gemm, LinearManyEqualsSeparateCalls) {
  SettingsGuard guard;
  std::mt19937 rng(16);
  const int64_t k = 200;
  const int64_t widths[] = {96, 37, 16, 300};
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (int64_t m : {1, 4, 9, 40}) {
      const std::vector<float> x = random_vec(rng, m * k);
      std::vector<std::vector<float>> w, b, y;
      std::vector<Projection> outs;
      for (int64_t n : widths) {
        w.push_back(random_vec(rng, k * n, 0.05f));
        b.push_back(random_vec(rng, n));
        y.emplace_back(static_cast<size_t>(m * n), NAN);
      }
      for (size_t i = 0; i < w.size(); ++i) outs.push_back({w[i].data(), widths[i], i == 1 ? nullptr : b[i].data(), y[i].data()});
      linear_many(x.data(), m, k, outs.data(), static_cast<int>(outs.size()));
      for (size_t i = 0; i < w.size(); ++i) {
        const std::vector<float> alone = run_linear(x, m, k, w[i], widths[i], outs[i].bias);
        ASSERT_TRUE(same_bits(alone.data(), y[i].data(), alone.size()))
            << "projection " << i << " m=" << m << " threads=" << threads;
      }
    }
  }
}

TEST(Gemm, EveryIsaGivesTheScalarBits) {
  SettingsGuard guard;
  std::mt19937 rng(15);
  for (const Shape& s : kGemmShapes) {
    for (int64_t m : {1, 4, 7, 70}) {
      const std::vector<float> x = random_vec(rng, m * s.k), w = random_vec(rng, s.k * s.n), b = random_vec(rng, s.n);
      ASSERT_EQ(set_isa(Isa::kScalar), Isa::kScalar);
      const std::vector<float> ref = run_linear(x, m, s.k, w, s.n, b.data());
      for (Isa isa : runnable_isas()) {
        ASSERT_EQ(set_isa(isa), isa);
        const std::vector<float> got = run_linear(x, m, s.k, w, s.n, b.data());
        ASSERT_TRUE(same_bits(ref.data(), got.data(), ref.size()))
            << isa_name(isa) << " k=" << s.k << " n=" << s.n << " m=" << m;
      }
    }
  }
}

// The ISA the kernels pick must be the best one the CPU offers, judged
// independently from /proc/cpuinfo's flags (the dispatcher asks cpuid).
// A host without AVX-512 (e.g. an AMD EPYC CI runner) is fine: its AVX2
// kernels are what the other tests then check.
TEST(Gemm, PicksTheBestVectorIsaThisMachineOffers) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags to judge by";
  auto has = [&](const char* f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
  Isa want = Isa::kScalar;
  if (has("avx2") && has("fma")) want = Isa::kAvx2;
  if (has("avx512f") && has("avx512dq") && has("avx512bw") && has("avx512vl") && has("fma")) want = Isa::kAvx512;
  EXPECT_EQ(best_isa(), want) << "picked " << isa_name(best_isa()) << ", the CPU offers " << isa_name(want);
  std::cout << "vector ISA on this machine: " << isa_name(best_isa()) << "\n";
}

}  // namespace
}  // namespace reprox::kernels::test
