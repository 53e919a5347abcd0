// The HF BPE model: merges applied by rank to each pre-tokenized word.
//
// Thread-safety: tokenize() is const and may run concurrently; the word cache
// (WordCache: tables of fixed size, allocated once) locks per shard of slots.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/tokenizer/word_cache.hpp"

namespace reprox::tok {

struct BpeConfig {
  std::vector<std::pair<std::string, int32_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class BpeModel {
 public:
  // Throws std::runtime_error when a merge names a token missing from vocab.
  explicit BpeModel(BpeConfig config);

  // Appends the ids of `word` to `out`. Characters that are not in the vocab
  // fall back to <0xXX> byte tokens (byte_fallback), else to unk, else are
  // dropped (HF raises an error there).
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(int32_t id) const;  // nullptr when unknown
  int32_t max_id() const { return max_id_; }

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  struct Merge {
    uint32_t rank;
    int32_t new_id;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<const std::string*> vocab_r_;  // id -> token (nullptr for holes)
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<int32_t> unk_id_;
  bool fuse_unk_;
  bool byte_fallback_;
  bool ignore_merges_;
  std::string prefix_;
  std::string suffix_;
  std::array<int32_t, 256> byte_ids_{};  // <0xXX> ids, -1 when absent
  // Single-character vocab entries by code point; used when there is no
  // continuing_subword_prefix / end_of_word_suffix to attach.
  std::unordered_map<char32_t, int32_t> char_ids_;
  int32_t max_id_ = -1;

  // Merged words by size, in tables allocated once (1 MiB and 3 MiB): most
  // words are short; a model with no pre-tokenizer (SentencePiece style)
  // sees whole lines as words. A word goes to the short table when it and
  // its ids fit a slot there, else to the long one.
  mutable WordCache short_words_{{16384, 24, 48}};
  mutable WordCache long_words_{{4096, 256, 768}};
};

}  // namespace reprox::tok
