#include "engine/sampling/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "engine/sampling/philox.hpp"
#include "tests/engine/sampling/test_logits.hpp"

namespace reprox::engine {
namespace {

using testing::random_logits;

std::vector<int32_t> run(const SamplingParams& params, const std::vector<float>& logits,
                         int steps, uint32_t choice = 0) {
  Sampler sampler(params, static_cast<int32_t>(logits.size()), choice);
  SampleResult result;
  std::vector<int32_t> ids;
  for (int i = 0; i < steps; ++i) {
    EXPECT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    ids.push_back(result.token);
  }
  return ids;
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

size_t differing_positions(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) count += a[i] != b[i];
  return count;
}

struct Config {
  const char* name;
  double temperature, top_p;
  int32_t top_k;
  double presence, frequency;
};

const Config kConfigs[] = {
    {"plain", 1.0, 1.0, 0, 0, 0},           {"hot", 1.7, 1.0, 0, 0, 0},
    {"top_k", 0.8, 1.0, 40, 0, 0},          {"top_p", 1.0, 0.9, 0, 0, 0},
    {"top_k_top_p", 0.7, 0.8, 50, 0, 0},    {"big_top_k", 1.0, 1.0, 2000, 0, 0},
    {"penalties", 1.0, 0.95, 0, 0.5, 0.3},  {"greedy_penalties", 0.0, 1.0, 0, 1.0, 0.7},
};

SamplingParams params_of(const Config& config, uint64_t seed) {
  SamplingParams params;
  params.temperature = config.temperature;
  params.top_p = config.top_p;
  params.top_k = config.top_k;
  params.presence_penalty = config.presence;
  params.frequency_penalty = config.frequency;
  params.seed = seed;
  return params;
}

TEST(Sampler, SameInputsGiveSameIdsOver10kDraws) {
  const auto logits = random_logits(1000, 1, -3.0f, 3.0f);
  for (const auto& config : kConfigs) {
    SCOPED_TRACE(config.name);
    const auto params = params_of(config, 42);
    const auto first = run(params, logits, 10000);
    EXPECT_EQ(first, run(params, logits, 10000));
  }
}

TEST(Sampler, SeedAndChoiceSelectIndependentStreams) {
  const auto logits = random_logits(1000, 2, -1.0f, 1.0f);
  for (const auto& config : kConfigs) {
    if (config.temperature == 0.0) continue;
    SCOPED_TRACE(config.name);
    const auto base = run(params_of(config, 7), logits, 2000, 0);
    EXPECT_GT(differing_positions(base, run(params_of(config, 8), logits, 2000, 0)), 1500u);
    EXPECT_GT(differing_positions(base, run(params_of(config, 7), logits, 2000, 1)), 1500u);
  }
}

TEST(Sampler, ResultDependsOnlyOnItsCoordinates) {
  // Interleaving samplers, sharing a scratch, replaying history with record()
  // and running on other threads must not change any draw.
  const auto logits = random_logits(1000, 3);
  for (const auto& config : kConfigs) {
    SCOPED_TRACE(config.name);
    const auto params = params_of(config, 99);
    const auto expected_a = run(params, logits, 500, 0);
    const auto expected_b = run(params, logits, 500, 1);

    Sampler a(params, 1000, 0), b(params, 1000, 1);
    SamplerScratch shared;
    SampleResult result;
    std::vector<int32_t> got_a, got_b;
    for (int i = 0; i < 500; ++i) {
      ASSERT_EQ(a.sample(logits.data(), &result, &shared), SampleStatus::kOk);
      got_a.push_back(result.token);
      ASSERT_EQ(b.sample(logits.data(), &result, &shared), SampleStatus::kOk);
      got_b.push_back(result.token);
    }
    EXPECT_EQ(got_a, expected_a);
    EXPECT_EQ(got_b, expected_b);

    Sampler replay(params, 1000, 0);
    for (int i = 0; i < 250; ++i) replay.record(expected_a[static_cast<size_t>(i)]);
    for (int i = 250; i < 500; ++i) {
      ASSERT_EQ(replay.sample(logits.data(), &result), SampleStatus::kOk);
      EXPECT_EQ(result.token, expected_a[static_cast<size_t>(i)]) << "step " << i;
    }

    std::vector<std::vector<int32_t>> per_thread(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < per_thread.size(); ++t) {
      threads.emplace_back([&, t] { per_thread[t] = run(params, logits, 500, 0); });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& ids : per_thread) EXPECT_EQ(ids, expected_a);
  }
}

TEST(Sampler, AskingForLogprobsDoesNotChangeTheDraws) {
  const auto logits = random_logits(1000, 4);
  for (const auto& config : kConfigs) {
    SCOPED_TRACE(config.name);
    auto params = params_of(config, 21);
    const auto plain = run(params, logits, 300);
    params.logprobs = true;
    params.top_logprobs = 3;
    EXPECT_EQ(run(params, logits, 300), plain);
  }
}

TEST(Sampler, UniformLogitsDrawFloorOfUTimesVocab) {
  // With equal weights the running sums are exact integers, so the inverse CDF
  // must pick floor(u * V) where u comes from the documented Philox layout.
  constexpr int32_t kVocab = 1000;
  const std::vector<float> logits(kVocab, 0.25f);
  SamplingParams params;
  params.seed = 0x0123456789abcdefull;
  Sampler sampler(params, kVocab, 5);
  SampleResult result;
  for (uint32_t step = 0; step < 300; ++step) {
    ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    const PhiloxCounter block = philox4x32_10({step, 0, 5, 0}, {0x89abcdef, 0x01234567});
    const double u = static_cast<double>(((uint64_t{block[0]} << 32) | block[1]) >> 11) * 0x1.0p-53;
    EXPECT_EQ(result.token, static_cast<int32_t>(std::floor(u * kVocab))) << "step " << step;
  }
}

TEST(Sampler, GreedyBreaksTiesToLowestId) {
  struct Case {
    std::vector<float> logits;
    double temperature;
    int32_t expected;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Case cases[] = {
      {{1, 3, 3, 2}, 0.0, 1},
      {{0, 0, 0, 0}, 0.0, 0},
      {{-inf, 2, 5, 5}, 0.0, 2},
      {{1, 3, 3, 2}, 1e-6, 1},  // below kGreedyTemperature
      {{std::nanf(""), -1, -1}, 0.0, 1},
  };
  for (const auto& c : cases) {
    SamplingParams params;
    params.temperature = c.temperature;
    EXPECT_EQ(run(params, c.logits, 3), std::vector<int32_t>(3, c.expected));
  }
}

TEST(Sampler, TopKOneAndTinyTopPAreArgmax) {
  for (uint32_t trial = 0; trial < 20; ++trial) {
    auto logits = random_logits(4000, 100 + trial);
    if (trial % 2 == 0) logits[3999] = logits[static_cast<size_t>(argmax(logits))];  // a tie
    const int32_t best = argmax(logits);
    SamplingParams top_k;
    top_k.top_k = 1;
    top_k.temperature = 1.5;
    top_k.seed = trial;
    EXPECT_EQ(run(top_k, logits, 50), std::vector<int32_t>(50, best));
    for (double top_p : {0.0, 1e-9}) {
      SamplingParams nucleus;
      nucleus.top_p = top_p;
      nucleus.seed = trial;
      EXPECT_EQ(run(nucleus, logits, 50), std::vector<int32_t>(50, best));
    }
  }
}

TEST(Sampler, LogitBiasForcesAndBansTokens) {
  const auto logits = random_logits(2000, 5);
  const int32_t best = argmax(logits);
  const int32_t low = static_cast<int32_t>(std::min_element(logits.begin(), logits.end()) - logits.begin());

  SamplingParams force;
  force.logit_bias = {{low, 100.0}};
  force.seed = 1;
  EXPECT_EQ(run(force, logits, 1000), std::vector<int32_t>(1000, low));

  SamplingParams ban;
  ban.logit_bias = {{best, -100.0}};
  ban.temperature = 0.0;
  const auto second = run(ban, logits, 1);
  EXPECT_NE(second[0], best);
  auto without_best = logits;
  without_best[static_cast<size_t>(best)] = -1e30f;
  EXPECT_EQ(second[0], argmax(without_best));

  ban.temperature = 1.0;
  ban.top_k = 0;
  const auto many = run(ban, logits, 10000);
  EXPECT_EQ(std::count(many.begin(), many.end(), best), 0);
}

TEST(Sampler, PenaltiesFollowTheOpenAIFormula) {
  // Hand-worked: a=1, b=0, frequency 0.4, presence 0.1, greedy.
  // a after n uses: 1 - (0.4 n + 0.1); b after m uses: -(0.4 m + 0.1).
  SamplingParams params;
  params.temperature = 0.0;
  params.frequency_penalty = 0.4;
  params.presence_penalty = 0.1;
  EXPECT_EQ(run(params, {1.0f, 0.0f, -10.0f}, 7), (std::vector<int32_t>{0, 0, 0, 1, 0, 1, 0}));

  // Against a direct simulation on a random vocabulary.
  const auto logits = random_logits(300, 6, -2.0f, 2.0f);
  params.frequency_penalty = 0.35;
  params.presence_penalty = -0.2;
  Sampler sampler(params, 300, 0);
  std::vector<int> counts(300, 0);
  SampleResult result;
  for (int step = 0; step < 400; ++step) {
    int32_t expected = -1;
    double expected_value = -INFINITY;
    for (int32_t i = 0; i < 300; ++i) {
      const double value = logits[static_cast<size_t>(i)] - counts[static_cast<size_t>(i)] * 0.35 -
                           (counts[static_cast<size_t>(i)] > 0 ? -0.2 : 0.0);
      if (value > expected_value) expected_value = value, expected = i;
    }
    ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    ASSERT_EQ(result.token, expected) << "step " << step;
    ++counts[static_cast<size_t>(expected)];
  }

  // record() counts too: a recorded token is penalized like a sampled one.
  SamplingParams presence;
  presence.temperature = 0.0;
  presence.presence_penalty = 2.0;
  Sampler recorded(presence, 3, 0);
  recorded.record(0);
  ASSERT_EQ(recorded.sample(std::vector<float>{1.0f, 0.0f, -5.0f}.data(), &result), SampleStatus::kOk);
  EXPECT_EQ(result.token, 1);
  EXPECT_EQ(recorded.step(), 2u);
}

// min_p keeps the tokens at least min_p times as likely as the most likely
// one: weights 8, 4, 2, 1 with min_p 0.3 keep 8 and 4 (2 < 0.3 * 8).
TEST(Sampler, MinPDropsTokensLessLikelyThanItsFractionOfTheTop) {
  const std::vector<float> logits{std::log(8.0f), std::log(4.0f), std::log(2.0f), std::log(1.0f)};
  auto seen = [&](double min_p, double temperature) {
    std::vector<int> counts(4, 0);
    for (uint64_t seed = 0; seed < 400; ++seed) {
      SamplingParams p;
      p.min_p = min_p;
      p.temperature = temperature;
      p.seed = seed;
      ++counts[static_cast<size_t>(run(p, logits, 1)[0])];
    }
    return counts;
  };
  auto kept = seen(0.3, 1.0);
  EXPECT_GT(kept[0], 0);
  EXPECT_GT(kept[1], 0);
  EXPECT_EQ(kept[2] + kept[3], 0);
  auto all = seen(0.0, 1.0);
  EXPECT_GT(all[2], 0);
  EXPECT_GT(all[3], 0);
  EXPECT_EQ(seen(1.0, 1.0)[0], 400) << "min_p 1 keeps the top token only";
  // After temperature: at 0.5 the weights are 64, 16, 4, 1; 0.2 keeps 64 and 16.
  auto cooled = seen(0.2, 0.5);
  EXPECT_GT(cooled[1], 0);
  EXPECT_EQ(cooled[2] + cooled[3], 0);
  // With logprobs (which share the softmax at temperature 1 without min_p),
  // the draws are the same.
  for (uint64_t seed = 0; seed < 50; ++seed) {
    SamplingParams p;
    p.min_p = 0.3;
    p.seed = seed;
    SamplingParams with = p;
    with.logprobs = true;
    EXPECT_EQ(run(p, logits, 3), run(with, logits, 3)) << seed;
  }
}

// repetition_penalty r (Hugging Face's): a positive logit of a prompt or
// completion token is divided by r, a negative one multiplied, once however
// often the token repeats.
TEST(Sampler, RepetitionPenaltyCoversThePromptAndTheCompletion) {
  SamplingParams params;
  params.temperature = 0.0;
  params.repetition_penalty = 1.2;
  const std::vector<float> logits{2.0f, 1.9f, -1.0f};
  // Prompt {0}: 2 / 1.2 = 1.67 < 1.9, so 1; then 1.9 / 1.2 = 1.58 < 1.67, so 0.
  Sampler sampler(params, 3, 0, {0});
  EXPECT_FALSE(sampler.argmax_decides());
  SampleResult result;
  std::vector<int32_t> ids;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    ids.push_back(result.token);
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 0, 0, 0}));
  // Without the prompt, 0 first.
  EXPECT_EQ(run(params, logits, 2), (std::vector<int32_t>{0, 1}));
  // A negative logit is multiplied: -0.5 * 2 = -1 ties with id 0's -1; ties go to the lower id.
  params.repetition_penalty = 2.0;
  Sampler negative(params, 3, 0, {2});
  ASSERT_EQ(negative.sample(std::vector<float>{-1.0f, -2.0f, -0.5f}.data(), &result), SampleStatus::kOk);
  EXPECT_EQ(result.token, 0);
  // 1 is off: the prompt is not read and the argmax decides.
  params.repetition_penalty = 1.0;
  EXPECT_TRUE(Sampler(params, 3, 0, {0}).argmax_decides());
}

// min_tokens holds back end_ids for the first min_tokens draws only, after
// logprobs are taken, and keeps the device argmax off meanwhile.
TEST(Sampler, MinTokensHoldsBackEndIdsForItsFirstDraws) {
  SamplingParams params;
  params.temperature = 0.0;
  params.min_tokens = 2;
  params.end_ids = {0, 99};  // 99 is outside the vocabulary: ignored
  const std::vector<float> logits{3.0f, 1.0f, 2.0f};
  Sampler sampler(params, 3, 0);
  SampleResult result;
  std::vector<int32_t> ids;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sampler.argmax_decides(), i >= 2) << i;
    ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
    ids.push_back(result.token);
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{2, 2, 0}));
  // Sampled too: id 0 (weight e^3 against e^1 + e^2) never comes first.
  params.temperature = 1.0;
  params.min_tokens = 1;
  params.logprobs = true;
  params.top_logprobs = 1;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    params.seed = seed;
    Sampler s(params, 3, 0);
    ASSERT_EQ(s.sample(logits.data(), &result), SampleStatus::kOk);
    EXPECT_NE(result.token, 0) << seed;
    // Logprobs are the raw distribution's: id 0 is still the most likely.
    ASSERT_EQ(result.top_logprobs.size(), 1u);
    EXPECT_EQ(result.top_logprobs[0].id, 0);
  }
  // Without end ids nothing is held back and the argmax decides.
  SamplingParams none;
  none.temperature = 0.0;
  none.min_tokens = 5;
  EXPECT_TRUE(Sampler(none, 3, 0).argmax_decides());
}

// allowed_ids keeps only its ids; a bad_words sequence bans its last id
// after the ids before it, a one-id word always.
TEST(Sampler, AllowedIdsAndBadWordsMaskTheDraw) {
  const std::vector<float> logits{3.0f, 2.0f, 1.0f, 0.0f};
  SamplingParams params;
  params.temperature = 0.0;
  params.allowed_ids = {1, 3};
  EXPECT_EQ(run(params, logits, 2), (std::vector<int32_t>{1, 1}));
  EXPECT_FALSE(Sampler(params, 4, 0).argmax_decides());
  params.temperature = 1.0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    params.seed = seed;
    for (int32_t id : run(params, logits, 3)) EXPECT_TRUE(id == 1 || id == 3) << seed;
  }

  SamplingParams words;
  words.temperature = 0.0;
  words.bad_words = {{2}, {0, 0}};  // never 2; never 0 right after 0
  EXPECT_EQ(run(words, logits, 4), (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_FALSE(Sampler(words, 4, 0).argmax_decides());
  words.bad_words = {{0}};
  EXPECT_EQ(run(words, logits, 2), (std::vector<int32_t>{1, 1}));
}

TEST(Sampler, LogprobsAreTheRawBiasedLogSoftmax) {
  constexpr int32_t kVocab = 5000;
  auto logits = random_logits(kVocab, 8, -8.0f, 8.0f);
  logits[10] = logits[20] = logits[30] = 9.5f;  // a three-way tie at the top
  logits[40] = -std::numeric_limits<float>::infinity();
  std::vector<double> biased(logits.begin(), logits.end());
  biased[40] = -INFINITY;
  const std::vector<std::pair<int32_t, double>> bias = {{7, 3.0}, {20, -0.5}, {7, 1.0}};
  for (const auto& [id, value] : bias) biased[static_cast<size_t>(id)] += value;
  const auto p = testing::reference_softmax(biased);

  for (const auto& config : kConfigs) {
    SCOPED_TRACE(config.name);
    auto params = params_of(config, 11);
    params.logit_bias = bias;
    params.logprobs = true;
    params.top_logprobs = 5;
    Sampler sampler(params, kVocab, 0);
    SampleResult result;
    for (int step = 0; step < 30; ++step) {
      ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
      EXPECT_NEAR(result.logprob, std::log(p[static_cast<size_t>(result.token)]), 2e-5);
      ASSERT_EQ(result.top_logprobs.size(), 5u);
      // Order: logprob desc, then id asc; 10 and 30 tie, 20 is biased down.
      std::vector<int32_t> order(kVocab);
      for (int32_t i = 0; i < kVocab; ++i) order[static_cast<size_t>(i)] = i;
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return static_cast<float>(std::log(p[static_cast<size_t>(a)])) >
               static_cast<float>(std::log(p[static_cast<size_t>(b)]));
      });
      for (size_t j = 0; j < 5; ++j) {
        EXPECT_EQ(result.top_logprobs[j].id, order[j]);
        EXPECT_NEAR(result.top_logprobs[j].logprob, std::log(p[static_cast<size_t>(order[j])]), 2e-5);
      }
      EXPECT_EQ(result.top_logprobs[0].id, 10);
      EXPECT_EQ(result.top_logprobs[1].id, 30);
    }
  }

}

TEST(Sampler, LogprobOfForcedImpossibleTokenIsFloor) {
  SamplingParams params;
  params.logprobs = true;
  params.top_logprobs = 3;
  params.temperature = 0.0;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {-inf, 0.0f, -inf};
  Sampler sampler(params, 3, 0);
  SampleResult result;
  ASSERT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kOk);
  EXPECT_EQ(result.token, 1);
  EXPECT_EQ(result.logprob, 0.0f);
  ASSERT_EQ(result.top_logprobs.size(), 3u);
  EXPECT_EQ(result.top_logprobs[1].id, 0);
  EXPECT_EQ(result.top_logprobs[1].logprob, -9999.0f);
  EXPECT_EQ(result.top_logprobs[2].id, 2);
}

TEST(Sampler, NoFiniteLogitIsAnErrorThatRecordsNothing) {
  const float nan = std::nanf("");
  const std::vector<float> logits = {nan, std::numeric_limits<float>::infinity(), nan};
  for (const auto& config : kConfigs) {
    SCOPED_TRACE(config.name);
    for (bool logprobs : {false, true}) {
      auto params = params_of(config, 1);
      params.logprobs = logprobs;
      Sampler sampler(params, 3, 0);
      SampleResult result;
      EXPECT_EQ(sampler.sample(logits.data(), &result), SampleStatus::kNoFiniteLogit);
      EXPECT_EQ(sampler.step(), 0u);
    }
  }
  // A single NaN is never drawn.
  std::vector<float> mostly = {0.0f, nan, 0.0f};
  SamplingParams params;
  const auto ids = run(params, mostly, 2000);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 0);
}

}  // namespace
}  // namespace reprox::engine
