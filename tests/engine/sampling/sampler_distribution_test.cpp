// Statistical checks: the empirical distribution of many draws (fixed seeds,
// so the outcome is fixed and cannot flake) against a reference computed
// directly with std::exp in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/sampling/sampler.hpp"
#include "tests/engine/sampling/test_logits.hpp"

namespace reprox::engine {
namespace {

// Reference: softmax of x / T, ranked by (p desc, id asc), top-k, renormalize,
// top-p prefix, renormalize. Returns p per id (0 for removed tokens).
std::vector<double> reference_distribution(const std::vector<float>& logits, double temperature,
                                           int32_t top_k, double top_p) {
  std::vector<double> x(logits.begin(), logits.end());
  for (auto& v : x) v /= temperature;
  auto p = testing::reference_softmax(x);
  std::vector<int32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)]; });
  size_t kept = order.size();
  if (top_k > 0) kept = std::min(kept, static_cast<size_t>(top_k));
  double mass = 0.0;
  for (size_t j = 0; j < kept; ++j) mass += p[static_cast<size_t>(order[j])];
  if (top_p < 1.0) {
    double running = 0.0;
    for (size_t j = 0; j < kept; ++j) {
      running += p[static_cast<size_t>(order[j])] / mass;
      if (running >= top_p) {
        kept = j + 1;
        break;
      }
    }
  }
  std::vector<double> result(p.size(), 0.0);
  double kept_mass = 0.0;
  for (size_t j = 0; j < kept; ++j) kept_mass += p[static_cast<size_t>(order[j])];
  for (size_t j = 0; j < kept; ++j) {
    result[static_cast<size_t>(order[j])] = p[static_cast<size_t>(order[j])] / kept_mass;
  }
  return result;
}

// Upper 1e-4 tail of chi-square with `df` degrees of freedom (Wilson-Hilferty).
double chi_square_critical(int df) {
  const double z = 3.719;
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3);
}

struct DistributionCase {
  const char* name;
  std::vector<float> logits;
  double temperature, top_p;
  int32_t top_k;
};

TEST(SamplerDistribution, EmpiricalFrequenciesMatchTheReference) {
  const std::vector<float> eight = {0.0f, 0.5f, 1.0f, -1.0f, 2.0f, 0.3f, -0.5f, 1.5f};
  const DistributionCase cases[] = {
      {"softmax", eight, 1.0, 1.0, 0},
      {"cold_top_k", eight, 0.6, 1.0, 5},
      {"hot_top_p", eight, 1.3, 0.7, 0},
      {"top_k_top_p", eight, 1.0, 0.9, 6},
      {"forty_tokens", testing::random_logits(40, 77, -2.0f, 2.0f), 1.0, 1.0, 0},
      {"forty_top_p", testing::random_logits(40, 78, -2.0f, 2.0f), 0.9, 0.8, 0},
  };
  constexpr int kDraws = 40000;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto expected = reference_distribution(c.logits, c.temperature, c.top_k, c.top_p);
    SamplingParams params;
    params.temperature = c.temperature;
    params.top_p = c.top_p;
    params.top_k = c.top_k;
    params.seed = 2024;
    Sampler sampler(params, static_cast<int32_t>(c.logits.size()), 0);
    SampleResult result;
    std::vector<int> counts(c.logits.size(), 0);
    for (int i = 0; i < kDraws; ++i) {
      ASSERT_EQ(sampler.sample(c.logits.data(), &result), SampleStatus::kOk);
      ++counts[static_cast<size_t>(result.token)];
    }
    double chi_square = 0.0;
    int categories = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (expected[i] == 0.0) {
        EXPECT_EQ(counts[i], 0) << "token " << i << " should have been truncated";
        continue;
      }
      const double e = expected[i] * kDraws;
      chi_square += (counts[i] - e) * (counts[i] - e) / e;
      ++categories;
    }
    ASSERT_GT(categories, 1);
    EXPECT_LT(chi_square, chi_square_critical(categories - 1));
  }
}

TEST(SamplerDistribution, TopPReachesIntoTheLowWeightTail) {
  // One strong token and 5000 weak ones (weight e^-10.5, below the first tier),
  // with equal weak logits ranked by id. top_p = 0.95 needs ~2900 weak tokens.
  std::vector<float> logits(5001, -10.5f);
  logits[0] = 0.0f;
  const auto expected = reference_distribution(logits, 1.0, 0, 0.95);
  int32_t last_kept = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] > 0.0) last_kept = static_cast<int32_t>(i);
  }
  ASSERT_GT(last_kept, 2000);
  ASSERT_LT(last_kept, 4000);

  SamplingParams params;
  params.top_p = 0.95;
  params.seed = 3;
  Sampler sampler(params, 5001, 0);
  SampleResult result;
  constexpr int kDraws = 8000;
  int strong = 0;
  int32_t highest_drawn = 0;
  for (int i = 0; i < kDraws; ++i) {
    ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    strong += result.token == 0;
    highest_drawn = std::max(highest_drawn, result.token);
  }
  EXPECT_LE(highest_drawn, last_kept);
  EXPECT_GE(highest_drawn, last_kept - 100);  // the tail is really sampled
  const double sd = std::sqrt(kDraws * expected[0] * (1 - expected[0]));
  EXPECT_NEAR(strong, kDraws * expected[0], 5 * sd);
}

}  // namespace
}  // namespace reprox::engine
