// Internal: the parts a Tokenizer is made of. Filled by the loaders.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/tokenizer/added_tokens.hpp"
#include "engine/tokenizer/bpe_model.hpp"
#include "engine/tokenizer/decoders.hpp"
#include "engine/tokenizer/normalizers.hpp"
#include "engine/tokenizer/pre_tokenizers.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace reprox::tok {

struct Tokenizer::Impl {
  std::unique_ptr<Normalizer> normalizer;      // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<Decoder> decoder;  // may be null: tokens joined by " "
  bool byte_fallback_decoder = false;  // the decoder chain has ByteFallback
  std::unordered_set<int32_t> byte_token_ids;  // <0xXX> ids when it does
  std::vector<AddedToken> added;
  std::unordered_map<int32_t, size_t> added_by_id;
  std::unordered_map<std::string, int32_t> added_by_content;
  std::unordered_set<int32_t> special_ids;
  std::unique_ptr<AddedTokenMatcher> raw_matcher;         // normalized == false
  std::unique_ptr<AddedTokenMatcher> normalized_matcher;  // normalized == true
  int32_t vocab_size = 0;

  // Builds the added-token indexes and matchers from `added`.
  void index_added_tokens();
};

}  // namespace reprox::tok
