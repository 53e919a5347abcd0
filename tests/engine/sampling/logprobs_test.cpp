// select_top_logprobs against a brute-force ranking: the k best entries by
// their float logprob, ties (also values that round to the same float) to
// the lower id, -inf entries at the floor, on rows shaped to make near-ties.
#include "engine/sampling/internal/logprobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace reprox::engine::internal {
namespace {

std::vector<TokenLogprob> brute_force(const std::vector<double>& x, const RawLogSoftmax& raw, int k) {
  std::vector<TokenLogprob> all;
  for (int32_t i = 0; i < static_cast<int32_t>(x.size()); ++i) all.push_back(TokenLogprob{i, logprob_of(x[i], raw)});
  std::stable_sort(all.begin(), all.end(),
                   [](const TokenLogprob& a, const TokenLogprob& b) { return a.logprob > b.logprob; });
  all.resize(std::min(all.size(), static_cast<size_t>(k)));
  return all;
}

std::vector<double> row(std::mt19937_64& rng, int n, int shape) {
  std::vector<double> x(static_cast<size_t>(n));
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_int_distribution<int> coarse(-4, 4);
  for (double& v : x) {
    switch (shape) {
      case 0: v = normal(rng); break;
      case 1: v = coarse(rng); break;                                    // exact ties
      case 2: v = 1.0 + coarse(rng) * 1e-12; break;                      // distinct doubles, equal floats
      default: v = (rng() % 4 == 0) ? -std::numeric_limits<double>::infinity() : normal(rng) - 20000.0; break;
    }
  }
  if (shape == 3) x[rng() % x.size()] = 0.0;  // one finite peak; the rest near or below the floor
  return x;
}

TEST(TopLogprobs, EqualsTheBruteForceRanking) {
  std::mt19937_64 rng(31);
  int rows = 0;
  for (int shape = 0; shape < 4; ++shape) {
    for (int n : {1, 3, 17, 1000}) {
      for (int k : {1, 2, 5, 8, 20}) {
        const std::vector<double> x = row(rng, n, shape);
        const RawLogSoftmax raw = raw_log_softmax(x.data(), n, nullptr);
        ASSERT_TRUE(raw.valid);
        std::vector<TokenLogprob> got;
        select_top_logprobs(x.data(), n, raw, k, &got);
        const std::vector<TokenLogprob> want = brute_force(x, raw, k);
        ASSERT_EQ(got.size(), want.size()) << "shape " << shape << " n " << n << " k " << k;
        for (size_t j = 0; j < want.size(); ++j) {
          EXPECT_EQ(got[j].id, want[j].id) << "shape " << shape << " n " << n << " k " << k << " rank " << j;
          EXPECT_EQ(got[j].logprob, want[j].logprob) << "shape " << shape << " n " << n << " k " << k;
        }
        ++rows;
      }
    }
  }
  EXPECT_EQ(rows, 80);
}

TEST(TopLogprobs, InfiniteEntriesFillTheListAtTheFloor) {
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  const std::vector<double> x = {minus_infinity, 2.0, minus_infinity, 1.0, minus_infinity};
  const RawLogSoftmax raw = raw_log_softmax(x.data(), 5, nullptr);
  std::vector<TokenLogprob> got;
  select_top_logprobs(x.data(), 5, raw, 4, &got);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].id, 1);
  EXPECT_EQ(got[1].id, 3);
  EXPECT_EQ(got[2].id, 0);
  EXPECT_EQ(got[2].logprob, kLogprobFloor);
  EXPECT_EQ(got[3].id, 2);
}

}  // namespace
}  // namespace reprox::engine::internal
