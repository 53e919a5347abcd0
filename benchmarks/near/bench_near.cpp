// What near-duplicate matching adds to an exact miss: the probe of the
// request's last user message (normalize, features, SimHash bands), the
// context key (a canonical form and SHA-256 of the rest of the request),
// and a lookup in an in-memory index holding many entries of the same
// context (candidates scored by cosine, guards on those above the
// threshold). The anchor, in the same run: the exact key of the same
// request, which every request pays. An exact hit pays none of this: the
// chat path consults the index only after an exact miss.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "policies/canonical_key.hpp"
#include "policies/near_key.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "proxy/app/near_match.hpp"
#include "proxy/cache/memory_near_index.hpp"

namespace {

using namespace reprox;

// A FAQ-style question from a fixed vocabulary and seed.
std::string question(std::mt19937& rng) {
  static const char* words[] = {"how", "do", "i", "reset", "my", "password", "account", "billing", "invoice",
                                "refund", "order", "shipping", "address", "change", "cancel", "subscription",
                                "plan", "upgrade", "email", "login", "two", "factor", "code", "delivery"};
  std::uniform_int_distribution<int> pick(0, int(std::size(words)) - 1), len(6, 14);
  std::string q;
  for (int i = 0, n = len(rng); i < n; ++i) q += std::string(i ? " " : "") + words[pick(rng)];
  return q + "?";
}

api::ChatRequest request_for(const std::string& text) {
  std::string body = R"({"model":"m","messages":[{"role":"system","content":"You are the support assistant."},)"
                     R"({"role":"user","content":")" + text + R"("}]})";
  return *api::parse_chat_request(body).request;
}

policy::KeyContext context() {
  policy::KeyContext kc;
  kc.model_id = "m";
  kc.fingerprint = "fp_0123456789abcdef";
  kc.tenant = "t";
  kc.effective_max_tokens = 256;
  return kc;
}

void BM_ExactKey(benchmark::State& state) {
  const api::ChatRequest req = request_for("How do I reset my password for my account?");
  const policy::KeyContext kc = context();
  for (auto _ : state) benchmark::DoNotOptimize(policy::make_key(req, kc));
}
BENCHMARK(BM_ExactKey);

void BM_NearProbe(benchmark::State& state) {
  const api::ChatRequest req = request_for("How do I reset my password for my account?");
  const policy::KeyContext kc = context();
  for (auto _ : state) benchmark::DoNotOptimize(near_probe(*policy::near_query(req, kc)));
}
BENCHMARK(BM_NearProbe);

// find_near over an index of state.range(0) entries in the request's context.
void BM_FindNear(benchmark::State& state) {
  std::mt19937 rng(7);
  MemoryNearIndex index(256u << 20);
  const policy::KeyContext kc = context();
  for (int64_t i = 0; i < state.range(0); ++i) {
    NearProbe p = near_probe(*policy::near_query(request_for(question(rng)), kc));
    index.add(p.query.context_key, p.bands, NearEntry{"key" + std::to_string(i), p.query.text, nullptr}, std::chrono::hours(1));
  }
  std::vector<NearProbe> probes;
  for (int i = 0; i < 64; ++i) probes.push_back(near_probe(*policy::near_query(request_for(question(rng)), kc)));
  size_t i = 0, candidates = 0, runs = 0;
  for (auto _ : state) {
    find_near(index, probes[i++ % probes.size()], 0.95, "", [&](NearReport r) {
      candidates += r.candidates.size();
      benchmark::DoNotOptimize(r);
    });
    ++runs;
  }
  state.counters["candidates"] = double(candidates) / double(std::max<size_t>(1, runs));
}
BENCHMARK(BM_FindNear)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace

BENCHMARK_MAIN();
