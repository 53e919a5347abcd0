// A compiled PCRE2 (8-bit, UTF + UCP, JIT when available) pattern used by the
// Split pre-tokenizer and the Replace normalizer.
//
// Thread-safety: a compiled Regex is immutable; find_all() allocates its own
// match data per call and uses a per-thread JIT stack, so it may be called
// concurrently from many threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reprox::tok {

struct Span {
  size_t begin;
  size_t end;
};

class Regex {
 public:
  // Throws std::runtime_error with PCRE2's message when the pattern is invalid.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // All non-overlapping matches, left to right (an empty match advances by one
  // character, as Oniguruma/Rust find_iter do). Input must be valid UTF-8.
  std::vector<Span> find_all(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Makes `\s` / `\S` in an HF (Oniguruma) pattern mean exactly Unicode
// White_Space, as in Oniguruma; PCRE2's UCP `\s` also matches U+180E.
std::string oniguruma_compatible(std::string_view pattern);

}  // namespace reprox::tok
