// Sampling cost per step at a 152k vocabulary (Qwen-sized), by setting.
// Speed is measured here, never asserted in unit tests.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "engine/sampling/sampler.hpp"

namespace {

using namespace reprox::engine;

// Logits shaped like a language model's: a broad bulk plus a few strong candidates.
std::vector<float> model_like_logits(int32_t vocab, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (auto& value : logits) {
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) sum += static_cast<double>(generator() >> 8) / 16777216.0;
    value = static_cast<float>(3.0 * (sum - 2.0));
  }
  for (int i = 0; i < 40; ++i) logits[generator() % static_cast<uint32_t>(vocab)] += 10.0f + static_cast<float>(i % 8);
  return logits;
}

void run(benchmark::State& state, SamplingParams params) {
  constexpr int32_t kVocab = 152064;
  static const auto logits = model_like_logits(kVocab, 9);
  params.logprobs = state.range(0) != 0;
  params.top_logprobs = params.logprobs ? 5 : 0;
  SamplerScratch scratch;
  Sampler sampler(params, kVocab, 0);
  SampleResult result;
  for (auto _ : state) {
    sampler.sample(logits.data(), &result, &scratch);
    benchmark::DoNotOptimize(result.token);
  }
}

SamplingParams make(double temperature, double top_p, int32_t top_k) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_p = top_p;
  p.top_k = top_k;
  p.seed = 5;
  return p;
}

void BM_Greedy(benchmark::State& s) { run(s, make(0, 1, 0)); }
void BM_Plain(benchmark::State& s) { run(s, make(1, 1, 0)); }
void BM_TopP(benchmark::State& s) { run(s, make(0.8, 0.9, 0)); }
void BM_TopK(benchmark::State& s) { run(s, make(0.8, 1, 40)); }

}  // namespace

BENCHMARK(BM_Greedy)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Plain)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopP)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopK)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
