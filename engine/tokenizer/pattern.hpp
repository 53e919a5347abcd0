// An HF `{"String": ...}` or `{"Regex": ...}` pattern.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/regex.hpp"

namespace reprox::tok {

class Pattern {
 public:
  static Pattern literal(std::string s);
  static Pattern regex(const std::string& pattern);  // throws on a bad pattern

  // Non-overlapping matches, left to right.
  std::vector<Span> find_all(std::string_view text) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
};

}  // namespace reprox::tok
