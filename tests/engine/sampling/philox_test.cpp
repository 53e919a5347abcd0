#include "engine/sampling/philox.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace reprox::engine {
namespace {

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123 tests/kat_vectors, "philox4x32 10" lines: counter, key, output.
const KnownAnswer kKnownAnswers[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(Philox, MatchesRandom123KnownAnswers) {
  for (const auto& kat : kKnownAnswers) {
    EXPECT_EQ(philox4x32_10(kat.counter, kat.key), kat.expected);
  }
}

TEST(Philox, SamplingBlockLayoutIsDocumented) {
  // seed -> key {lo, hi}; (step lo, step hi, choice, 0) -> counter.
  const uint64_t seed = 0x299f31d0a4093822ull;
  const uint64_t step = 0x85a308d3243f6a88ull;
  const uint32_t choice = 0x13198a2e;
  EXPECT_EQ(sampling_random_block(seed, choice, step),
            philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0}, {0xa4093822, 0x299f31d0}));
  EXPECT_EQ(sampling_random_block(0, 0, 0), kKnownAnswers[0].expected);
}

TEST(Philox, UniformUsesTop53BitsOfFirstTwoWords) {
  EXPECT_EQ(uniform_from_words(0, 0), 0.0);
  EXPECT_EQ(uniform_from_words(0, 0x800), 0x1.0p-53);
  EXPECT_EQ(uniform_from_words(0, 0x7ff), 0.0);  // low 11 bits are dropped
  EXPECT_EQ(uniform_from_words(0xffffffff, 0xffffffff), 1.0 - 0x1.0p-53);
  EXPECT_EQ(uniform_from_words(0x80000000, 0), 0.5);
  const double expected = static_cast<double>(0x6627e8d5e169c58dull >> 11) / 9007199254740992.0;
  EXPECT_EQ(sampling_uniform(0, 0, 0), expected);
}

TEST(Philox, StreamsDifferBySeedChoiceAndStep) {
  std::set<double> seen;
  for (uint64_t seed : {0ull, 1ull, 1ull << 32, ~0ull}) {
    for (uint32_t choice : {0u, 1u, 7u}) {
      for (uint64_t step : {0ull, 1ull, 1ull << 32}) seen.insert(sampling_uniform(seed, choice, step));
    }
  }
  EXPECT_EQ(seen.size(), 4u * 3u * 3u);
}

TEST(Philox, UniformMomentsAreSane) {
  // 200k draws: mean 1/2 and variance 1/12 within ~6 standard errors.
  constexpr int kDraws = 200000;
  double sum = 0.0, sum_squares = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = sampling_uniform(12345, 3, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_squares += u * u;
  }
  const double mean = sum / kDraws;
  const double variance = sum_squares / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.5, 6 * 0.2887 / std::sqrt(kDraws));
  EXPECT_NEAR(variance, 1.0 / 12.0, 0.002);
}

}  // namespace
}  // namespace reprox::engine
