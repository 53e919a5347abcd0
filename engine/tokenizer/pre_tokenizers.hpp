// HF pre-tokenizers: ByteLevel, Split, Metaspace, Sequence. A null
// pre-tokenizer is an empty Sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/pattern.hpp"

namespace reprox::tok {

struct Piece {
  std::string text;
  bool at_origin;  // starts at byte 0 of the original input (Metaspace "first")
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// Splits `piece` at `matches` as HF's NormalizedString::split does.
std::vector<Piece> split_piece(const Piece& piece, const std::vector<Span>& matches, SplitBehavior behavior,
                               bool invert);

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` with its pre-tokenized pieces. Const and thread-safe.
  virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

enum class PrependScheme { Always, First, Never };

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex);
std::unique_ptr<PreTokenizer> make_split_pre_tokenizer(Pattern pattern, SplitBehavior behavior, bool invert);
std::unique_ptr<PreTokenizer> make_metaspace_pre_tokenizer(std::string replacement, PrependScheme scheme,
                                                           bool split);
std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps);

// The GPT-2 pre-tokenization regex (ByteLevel with use_regex).
const char* gpt2_split_regex();

}  // namespace reprox::tok
