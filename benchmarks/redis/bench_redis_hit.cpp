// The CPU work reprox does for one Redis-tier hit once the bytes are in:
// decode the entry and render the JSON body (or, as non-stream hits do now,
// check it in place and render from its views), for an answer of WORDS words
// (the shape run_redis_bench.sh stores: one event per word). The anchor is
// copying the entry's bytes once (memcpy), measured in the same run; the
// ratios say how many such copies each step costs.
//
//   build/benchmarks/redis/reprox_bench_redis_hit [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>

#include "proxy/api/chat_response.hpp"
#include "proxy/cache/entry_codec.hpp"

namespace reprox {
namespace {

constexpr int kWords = 200;

Generation answer_of(int words) {
  Generation g;
  g.model = "scripted-model";
  g.system_fingerprint = "fp_0123456789abcdef";
  g.n_choices = 1;
  g.created_unix_ms = 1700000000123;
  g.usage = Usage{20, words, 0};
  g.events.push_back(GenEvent{0, Delta{"", "\"role\":\"assistant\"", ""}, ""});
  for (int i = 0; i < words; ++i) g.events.push_back(GenEvent{0, Delta{" word" + std::to_string(i), "", ""}, ""});
  g.events.back().finish_reason = "stop";
  return g;
}

const std::string& encoded() {
  static const std::string bytes = encode_generation(answer_of(kWords));
  return bytes;
}

void BM_AnchorMemcpy(benchmark::State& state) {
  const std::string& in = encoded();
  std::string out(in.size(), '\0');
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_AnchorMemcpy);

void BM_Crc32(benchmark::State& state) {
  const std::string& in = encoded();
  for (auto _ : state) benchmark::DoNotOptimize(entry_crc32(in));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_Crc32);

void BM_Decode(benchmark::State& state) {
  const std::string& in = encoded();
  for (auto _ : state) {
    auto g = std::make_shared<Generation>();
    if (decode_generation(in, *g) != CodecError::none) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(g.get());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_Decode);

void BM_DecodeAndRender(benchmark::State& state) {
  const std::string& in = encoded();
  auto meta = api::fresh_meta("scripted-model", "fp_0123456789abcdef");
  for (auto _ : state) {
    auto g = std::make_shared<Generation>();
    if (decode_generation(in, *g) != CodecError::none) state.SkipWithError("decode failed");
    std::string body = api::render_completion_from_tail(meta, api::render_completion_tail(*g));
    benchmark::DoNotOptimize(body.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_DecodeAndRender);

// The check alone: checksum, every field's bounds, every choice finished.
void BM_Open(benchmark::State& state) {
  const std::string& in = encoded();
  for (auto _ : state) {
    EncodedGeneration e;
    if (e.open(in) != CodecError::none) state.SkipWithError("open failed");
    benchmark::DoNotOptimize(e.n_events());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_Open);

// What a non-stream Redis hit does now: check the entry in place and render
// the body from its views, never building the generation.
void BM_OpenAndRender(benchmark::State& state) {
  const std::string& in = encoded();
  auto meta = api::fresh_meta("scripted-model", "fp_0123456789abcdef");
  for (auto _ : state) {
    EncodedGeneration e;
    if (e.open(in) != CodecError::none) state.SkipWithError("open failed");
    auto walk = [&e](const std::function<void(const EventView&)>& fn) { e.for_each_event(fn); };
    std::string body = api::render_completion_from_tail(meta, api::render_completion_tail(e.n_choices(), e.usage(), walk));
    benchmark::DoNotOptimize(body.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_OpenAndRender);

}  // namespace
}  // namespace reprox

BENCHMARK_MAIN();
