#pragma once
// Copies a tokenizer into a tiny model folder and reports the ids the model
// must cover. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reprox::engine {

struct TokenizerFacts {
  int64_t id_range = 0;  // max token id + 1, added tokens included
  std::vector<int32_t> eos_ids;
  std::optional<int32_t> bos_id;
};

// Reads `source_dir` (tokenizer.json + tokenizer_config.json, or GPT-2's
// encoder.json/vocab.json + vocab.bpe/merges.txt) without writing anything.
TokenizerFacts inspect_tokenizer(const std::string& source_dir);

// Copies the tokenizer files into `out_dir`; adds `chat_template` to
// tokenizer_config.json when the source has none.
void copy_tokenizer(const std::string& source_dir, const std::string& out_dir, const std::string& chat_template);

// Escapes `text` as a JSON string literal, quotes included.
std::string json_quote(const std::string& text);

}  // namespace reprox::engine
