// Weight storage on a SmolLM2-135M-shaped random model (llama, hidden 576,
// 30 layers, 9 heads / 3 kv heads, intermediate 1536, vocabulary 49152, tied
// embeddings), strict mode:
//   1. memory: VmRSS after loading (in a fresh child process per mode) against
//      the weight bytes at that storage plus the KV cache allocated;
//   2. quality: on a fixed set of prompts, the mean and max |logit difference|
//      and the top-1 agreement of bf16 and q8 storage against fp32.
//
// usage: reprox_bench_q8_quality [--prompts N] [--length T] [--work DIR]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <torch/types.h>

#include "engine/model/model.hpp"
#include "engine/tiny/make_tiny_model.hpp"

namespace {
using reprox::engine::Model;

// VmRSS of this process in bytes.
double rss_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
  }
  return 0;
}

std::unique_ptr<Model> load(const std::string& dir, const std::string& weights) {
  reprox::engine::LoadOptions o;
  o.weights = weights;
  o.progress = false;
  return Model::load(dir, o);
}

// In a child: load with `weights`, allocate a cache of `kv_tokens`, print RSS.
void report_rss(const std::string& dir, const std::string& weights, int64_t kv_tokens) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid != 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    return;
  }
  const double before = rss_bytes();
  const auto model = load(dir, weights);
  const reprox::engine::KvCache kv = model->new_cache(kv_tokens);
  const double kv_bytes = 2.0 * kv.k.size() * kv.k[0].numel() * 4;
  const double after = rss_bytes(), weights_bytes = static_cast<double>(model->weight_bytes());
  std::printf("%-6s %12.1f %12.1f %12.1f %12.1f %8.3f\n", weights.c_str(), weights_bytes / 1e6, kv_bytes / 1e6,
              before / 1e6, after / 1e6, (after - before) / (weights_bytes + kv_bytes));
  std::fflush(stdout);
  _exit(0);
}

std::vector<int32_t> prompt(int64_t length, int64_t vocab, uint64_t seed) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < length; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(static_cast<int32_t>((seed >> 33) % static_cast<uint64_t>(vocab)));
  }
  return out;
}

void report_quality(const std::string& dir, int prompts, int64_t length) {
  c10::InferenceMode guard;
  const auto ref = load(dir, "f32");
  std::printf("\n%-6s %8s %14s %14s %10s\n", "vs f32", "logits", "mean |diff|", "max |diff|", "top-1");
  std::vector<torch::Tensor> want;
  for (int p = 0; p < prompts; ++p) {
    reprox::engine::KvCache kv = ref->new_cache(length);
    want.push_back(ref->forward(prompt(length, ref->config().vocab_size, 1000 + p), kv, true));
  }
  double ref_scale = 0;
  for (const torch::Tensor& w : want) ref_scale = std::max(ref_scale, w.abs().max().item<double>());
  for (const std::string weights : {"bf16", "q8"}) {
    const auto model = load(dir, weights);
    double sum = 0, max = 0, agree = 0, count = 0;
    for (int p = 0; p < prompts; ++p) {
      reprox::engine::KvCache kv = model->new_cache(length);
      const torch::Tensor got = model->forward(prompt(length, ref->config().vocab_size, 1000 + p), kv, true);
      const torch::Tensor diff = (got - want[p]).abs();
      sum += diff.sum().item<double>();
      max = std::max(max, diff.max().item<double>());
      agree += (got.argmax(1) == want[p].argmax(1)).sum().item<double>();
      count += static_cast<double>(got.size(0));
    }
    std::printf("%-6s %8.0f %14.6f %14.6f %9.2f%%\n", weights.c_str(), count, sum / (count * want[0].size(1)), max,
                100.0 * agree / count);
  }
  std::printf("(fp32 logits reach |%.3f|; %d prompts of %lld random tokens, every position compared)\n", ref_scale,
              prompts, static_cast<long long>(length));
}

}  // namespace

int main(int argc, char** argv) {
  int prompts = 8;
  int64_t length = 64;
  std::string work = (std::filesystem::temp_directory_path() / ("reprox-q8-" + std::to_string(getpid()))).string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--prompts") prompts = std::atoi(argv[i + 1]);
    if (a == "--length") length = std::atoll(argv[i + 1]);
    if (a == "--work") work = argv[i + 1];
  }
  reprox::engine::TinyModelOptions o;
  o.npm_fixtures_dir = REPROX_NPM_DIR;
  reprox::engine::apply_tiny_preset("smollm2", o);
  o.vocab_size = 49152;
  o.max_positions = 2048;
  o.out_dir = work;
  if (reprox::engine::run_make_tiny_model(o) != 0) return 1;
  std::printf("%-6s %12s %12s %12s %12s %8s\n", "weights", "weights MB", "KV MB", "RSS before", "RSS after",
              "delta/(w+kv)");
  for (const char* weights : {"f32", "bf16", "q8"}) report_rss(work, weights, 2048);
  report_quality(work, prompts, length);
  std::filesystem::remove_all(work);
  return 0;
}
