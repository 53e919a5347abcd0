// Prefill and decode throughput at batch 1, each set against the memory
// bandwidth bound (weight bytes read per decode step / memcpy bandwidth
// measured in the same run).
//
// usage: reprox_bench_model [--threads N] [--work DIR] [--skip-smollm]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "make_tiny_model.hpp"
#include "model.hpp"

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

void bench(const std::string& label, const std::string& dir, double bandwidth) {
  const auto model = Model::load(dir);
  const double bytes_per_token = static_cast<double>(model->weight_bytes());
  const double bound = bandwidth / bytes_per_token;  // tok/s if every step streams all weights once

  const int64_t vocab = model->config().vocab_size;
  const std::vector<int32_t> prompt = tokens(128, vocab);
  double prefill_best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    KvCache kv = model->new_cache(512);
    const auto start = Clock::now();
    model->forward(prompt, kv);
    prefill_best = std::min(prefill_best, seconds_since(start));
  }
  const double prefill_tps = static_cast<double>(prompt.size()) / prefill_best;

  const int decode_steps = 64;
  double decode_best = 1e30;
  for (int rep = 0; rep < 2; ++rep) {
    KvCache kv = model->new_cache(512);
    model->forward(std::vector<int32_t>(prompt.begin(), prompt.begin() + 16), kv);
    const std::vector<int32_t> next = tokens(decode_steps, vocab);
    const auto start = Clock::now();
    for (int i = 0; i < decode_steps; ++i) model->forward({next[i]}, kv);
    decode_best = std::min(decode_best, seconds_since(start));
  }
  const double decode_tps = decode_steps / decode_best;

  std::cout << label << ": weights " << bytes_per_token / 1e6 << " MB (" << model->compute_dtype_name()
            << "), bandwidth bound " << bound << " tok/s\n"
            << "  prefill (128 tokens): " << prefill_tps << " tok/s = " << prefill_tps / bound << " x bound\n"
            << "  decode (64 steps after 16): " << decode_tps << " tok/s = " << decode_tps / bound << " x bound\n";
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool skip_smollm = false;
  std::string work = (std::filesystem::temp_directory_path() / "reprox_bench_model").string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (arg == "--work" && i + 1 < argc) work = argv[++i];
    else if (arg == "--skip-smollm") skip_smollm = true;
    else {
      std::cerr << "usage: reprox_bench_model [--threads N] [--work DIR] [--skip-smollm]\n";
      return 2;
    }
  }
  if (threads > 0) torch::set_num_threads(threads);
  std::cout << "torch intra-op threads: " << torch::get_num_threads() << "\n";
  const double bandwidth = memcpy_bandwidth();
  std::cout << "memcpy bandwidth: " << bandwidth / 1e9 << " GB/s\n";

  reprox::engine::TinyModelOptions tiny;
  tiny.out_dir = work + "/tiny-qwen3";
  tiny.npm_fixtures_dir = REPROX_NPM_DIR;
  tiny.head_dim = 16;
  if (reprox::engine::run_make_tiny_model(tiny) != 0) return 1;
  bench("tiny qwen3 (default embedded shape)", tiny.out_dir, bandwidth);

  if (!skip_smollm) {
    reprox::engine::TinyModelOptions smol;
    smol.out_dir = work + "/smollm2-135m-shaped";
    smol.npm_fixtures_dir = REPROX_NPM_DIR;
    smol.arch = "llama";
    smol.hidden = 576;
    smol.layers = 30;
    smol.heads = 9;
    smol.kv_heads = 3;
    smol.intermediate = 1536;
    smol.vocab_size = 49152;
    smol.max_positions = 8192;
    smol.tie_embeddings = true;
    smol.rope_theta = 100000.0;
    if (reprox::engine::run_make_tiny_model(smol) != 0) return 1;
    bench("SmolLM2-135M-shaped llama (random)", smol.out_dir, bandwidth);
  }
  return 0;
}
