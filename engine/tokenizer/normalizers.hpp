// HF normalizers: NFC/NFD/NFKC/NFKD, Lowercase, Prepend, Replace, Strip,
// Sequence. A null normalizer is represented by an empty Sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/pattern.hpp"

namespace reprox::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Input and output are valid UTF-8. Const and thread-safe.
  virtual std::string normalize(std::string s) const = 0;
};

enum class UnicodeForm { NFC, NFD, NFKC, NFKD };

std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form);
std::unique_ptr<Normalizer> make_lowercase_normalizer();
// Prepends `prefix` to non-empty input.
std::unique_ptr<Normalizer> make_prepend_normalizer(std::string prefix);
// Replaces every match of `pattern` with `content`.
std::unique_ptr<Normalizer> make_replace_normalizer(Pattern pattern, std::string content);
// Strips Unicode whitespace on the left and/or right.
std::unique_ptr<Normalizer> make_strip_normalizer(bool left, bool right);
std::unique_ptr<Normalizer> make_sequence_normalizer(std::vector<std::unique_ptr<Normalizer>> steps);

// Shared by the Replace normalizer and the Replace decoder.
std::string replace_all(const Pattern& pattern, const std::string& s, const std::string& content);

}  // namespace reprox::tok
