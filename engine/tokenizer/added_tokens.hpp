// Added tokens (special and not): found in the input before normalization
// (normalized=false) or after it (normalized=true), longest match first,
// honouring HF's lstrip / rstrip / single_word flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace reprox::tok {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

// One piece of a split: either an added token (id >= 0) or plain text.
struct Section {
  size_t begin;
  size_t end;
  int32_t added_id;  // -1 for plain text
};

// A byte trie matcher over a fixed set of added tokens. Immutable after
// construction; split() is const and thread-safe.
class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  bool empty() const { return tokens_.empty(); }
  // Splits `text` (valid UTF-8). With skip_special, special tokens are not
  // matched (their text stays plain), as HF's encode_special_tokens does.
  std::vector<Section> split(std::string_view text, bool skip_special) const;

 private:
  struct Node {
    std::unordered_map<unsigned char, int32_t> children;
    int32_t token = -1;  // index into tokens_
  };
  // Index of the longest token starting at `pos`, or -1; sets `len`.
  int32_t longest_at(std::string_view text, size_t pos, size_t& len) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_;
  bool first_byte_[256] = {};
};

}  // namespace reprox::tok
