// Sampling cost per step at a 152k vocabulary (Qwen-sized), by setting, on
// the scalar path and on this CPU's widest ISA (the anchor: same run, same bits).
// Speed is measured here, never asserted in unit tests.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/kernels/kernels.hpp"
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

// range(0): logprobs off/on (top 5); range(1): the kernels' ISA (0 scalar,
// 1 AVX2, 2 AVX-512), which picks the softmax's exp path.
void run(benchmark::State& state, SamplingParams params) {
  constexpr int32_t kVocab = 152064;
  static const auto logits = model_like_logits(kVocab, 9);
  params.logprobs = state.range(0) != 0;
  params.top_logprobs = params.logprobs ? 5 : 0;
  const auto isa = static_cast<reprox::kernels::Isa>(state.range(1));
  if (reprox::kernels::set_isa(isa) != isa) {
    state.SkipWithError("this CPU lacks the ISA");
    return;
  }
  SamplerScratch scratch;
  Sampler sampler(params, kVocab, 0);
  SampleResult result;
  for (auto _ : state) {
    sampler.sample(logits.data(), &result, &scratch);
    benchmark::DoNotOptimize(result.token);
  }
  state.SetLabel(reprox::kernels::isa_name(isa));
}

SamplingParams make(double temperature, double top_p, int32_t top_k) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_p = top_p;
  p.top_k = top_k;
  p.seed = 5;
  return p;
}

// Prints the console table, then each setting's time on this CPU's widest
// ISA against the scalar path in the same run (the same bits either way).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      const std::string name = run.benchmark_name();
      const size_t isa_at = name.rfind("/isa:");
      seconds_[name.substr(0, isa_at)][name.substr(isa_at + 5)] = run.GetAdjustedRealTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const std::string best = std::to_string(static_cast<int>(reprox::kernels::best_isa()));
    std::printf("\n%-28s %12s %12s %10s\n", "setting", "scalar (us)", "best (us)", "speed-up");
    for (const auto& [setting, by_isa] : seconds_) {
      const auto scalar = by_isa.find("0"), widest = by_isa.find(best);
      if (scalar == by_isa.end() || widest == by_isa.end()) continue;
      std::printf("%-28s %12.1f %12.1f %9.2fx\n", setting.c_str(), scalar->second, widest->second,
                  scalar->second / widest->second);
    }
    std::printf("best ISA: %s\n", reprox::kernels::isa_name(reprox::kernels::best_isa()));
  }

 private:
  std::map<std::string, std::map<std::string, double>> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::pair<const char*, SamplingParams> settings[] = {
      {"BM_Greedy", make(0, 1, 0)}, {"BM_Plain", make(1, 1, 0)}, {"BM_TopP", make(0.8, 0.9, 0)},
      {"BM_TopK", make(0.8, 1, 40)}};
  std::vector<int64_t> isas{0};
  if (reprox::kernels::best_isa() != reprox::kernels::Isa::kScalar) {
    isas.push_back(static_cast<int64_t>(reprox::kernels::best_isa()));
  }
  for (const auto& [name, params] : settings) {
    auto* b = benchmark::RegisterBenchmark(name, [params = params](benchmark::State& s) { run(s, params); });
    b->ArgNames({"logprobs", "isa"})->ArgsProduct({{0, 1}, isas})->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  // Colour only on a terminal: a custom reporter does not read --benchmark_color.
  RatioReporter reporter(::isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                 : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
