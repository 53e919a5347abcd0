// Prefill and decode throughput at batch 1, strict vs fast numeric mode in the
// same run, each set against the memory bandwidth bound (weight bytes read per
// decode step / memcpy bandwidth measured in the same run), and the strict/fast
// cost ratio (time per token, strict over fast).
//
// usage: reprox_bench_model [--threads N] [--reps N] [--work DIR] [--skip-smollm]
//   --threads: torch intra-op threads and strict kernel threads (default 1)
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <torch/types.h>

#include "engine/tiny/make_tiny_model.hpp"
#include "engine/model/model.hpp"

namespace {
using Clock = std::chrono::steady_clock;
using reprox::engine::KvCache;
using reprox::engine::Model;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best-of-5 memcpy bandwidth over a 512 MiB buffer, bytes copied per second.
double memcpy_bandwidth() {
  const size_t bytes = size_t{512} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    best = std::max(best, static_cast<double>(bytes) / seconds_since(start));
    src[i] = dst[bytes - 1 - i];  // keep the copies observable
  }
  return best;
}

std::vector<int32_t> tokens(size_t n, int64_t vocab) {
  std::vector<int32_t> out;
  uint64_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab)));
  }
  return out;
}

struct Throughput {
  double prefill_tps = 0;
  double decode_tps = 0;
};

// Best-of-`reps` prefill of 128 tokens, and decode of 64 single-token steps
// after a 16-token prompt. The modes alternate inside each repetition so that
// load from other jobs on the machine hits both alike.
std::vector<Throughput> measure(const std::vector<const Model*>& models, int reps) {
  const int64_t vocab = models.front()->config().vocab_size;
  const std::vector<int32_t> prompt = tokens(128, vocab);
  const std::vector<int32_t> next = tokens(64, vocab);
  std::vector<double> prefill_best(models.size(), 1e30), decode_best(models.size(), 1e30);
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t m = 0; m < models.size(); ++m) {
      KvCache kv = models[m]->new_cache(512);
      auto start = Clock::now();
      models[m]->forward(prompt, kv);
      prefill_best[m] = std::min(prefill_best[m], seconds_since(start));

      KvCache dkv = models[m]->new_cache(512);
      models[m]->forward(std::vector<int32_t>(prompt.begin(), prompt.begin() + 16), dkv);
      start = Clock::now();
      for (int32_t id : next) models[m]->forward({id}, dkv);
      decode_best[m] = std::min(decode_best[m], seconds_since(start));
    }
  }
  std::vector<Throughput> out(models.size());
  for (size_t m = 0; m < models.size(); ++m) {
    out[m].prefill_tps = static_cast<double>(prompt.size()) / prefill_best[m];
    out[m].decode_tps = static_cast<double>(next.size()) / decode_best[m];
  }
  return out;
}

void bench(const std::string& label, const std::string& dir, double bandwidth, int threads, int reps) {
  reprox::engine::LoadOptions options;
  options.threads = threads;
  options.numeric_mode = "strict";
  const auto strict = Model::load(dir, options);
  options.numeric_mode = "fast";
  const auto fast = Model::load(dir, options);
  const double bytes_per_token = static_cast<double>(strict->weight_bytes());
  const double bound = bandwidth / bytes_per_token;  // tok/s if every step streams all weights once
  const std::vector<Throughput> t = measure({strict.get(), fast.get()}, reps);

  std::cout << label << ": weights " << bytes_per_token / 1e6 << " MB (" << strict->compute_dtype_name()
            << "), bandwidth bound " << bound << " tok/s\n";
  const char* names[] = {"strict", "fast  "};
  for (size_t m = 0; m < 2; ++m) {
    std::cout << "  " << names[m] << " prefill (128 tokens): " << t[m].prefill_tps << " tok/s = "
              << t[m].prefill_tps / bound << " x bound; decode (64 steps after 16): " << t[m].decode_tps
              << " tok/s = " << t[m].decode_tps / bound << " x bound\n";
  }
  // Cost ratio = strict time / fast time (goal: <= 1.10).
  std::cout << "  strict/fast cost ratio: prefill " << t[1].prefill_tps / t[0].prefill_tps << ", decode "
            << t[1].decode_tps / t[0].decode_tps << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  int reps = 3;
  bool skip_smollm = false;
  std::string work = (std::filesystem::temp_directory_path() / "reprox_bench_model").string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (arg == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--work" && i + 1 < argc) work = argv[++i];
    else if (arg == "--skip-smollm") skip_smollm = true;
    else {
      std::cerr << "usage: reprox_bench_model [--threads N] [--reps N] [--work DIR] [--skip-smollm]\n";
      return 2;
    }
  }
  std::cout << "threads (torch intra-op and strict kernels): " << threads << ", repetitions: " << reps << "\n";
  const double bandwidth = memcpy_bandwidth();
  std::cout << "memcpy bandwidth: " << bandwidth / 1e9 << " GB/s\n";

  reprox::engine::TinyModelOptions tiny;
  tiny.out_dir = work + "/tiny-qwen3";
  tiny.npm_fixtures_dir = REPROX_NPM_DIR;
  tiny.head_dim = 16;
  if (reprox::engine::run_make_tiny_model(tiny) != 0) return 1;
  bench("tiny qwen3 (default embedded shape)", tiny.out_dir, bandwidth, threads, reps);

  if (!skip_smollm) {
    reprox::engine::TinyModelOptions smol;
    smol.out_dir = work + "/smollm2-135m-shaped";
    smol.npm_fixtures_dir = REPROX_NPM_DIR;
    reprox::engine::apply_tiny_preset("smollm2", smol);
    smol.tokenizer_dir.clear();  // here: the llama tokenizer and SmolLM2's own 49k vocabulary and rope theta
    smol.vocab_size = 49152;
    smol.max_positions = 8192;
    smol.rope_theta = 100000.0;
    if (reprox::engine::run_make_tiny_model(smol) != 0) return 1;
    bench("SmolLM2-135M-shaped llama (random)", smol.out_dir, bandwidth, threads, reps);
  }
  return 0;
}
