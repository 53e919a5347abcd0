// UTF-8 and Unicode helpers shared by the tokenizer pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/tokenizer/utf8_append.hpp"  // utf8_append

namespace reprox::tok {

// Length in bytes of the UTF-8 sequence that starts with lead byte `b`
// (1 for ASCII and for stray continuation/invalid bytes).
inline size_t utf8_len(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 1;
}

// Decodes the code point at s[i] (assumes valid UTF-8) and advances i.
char32_t utf8_next(std::string_view s, size_t& i);
// Decodes the last code point before `end` (assumes valid UTF-8); sets `start`.
char32_t utf8_prev(std::string_view s, size_t end, size_t& start);

bool is_valid_utf8(std::string_view s);
// Converts bytes to UTF-8 the way Rust's String::from_utf8_lossy does: each
// maximal invalid subpart becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes);

// Unicode White_Space (Rust char::is_whitespace).
bool is_unicode_whitespace(char32_t cp);
// Rust char::is_alphanumeric (Alphabetic or Numeric), approximated by the
// L*, Nl, Nd, No general categories, plus '_' (HF "word" characters).
bool is_word_char(char32_t cp);

// Code points that never change under NFC, in any context (see the .cpp).
bool nfc_inert(char32_t cp);

// Normalization forms via utf8proc; input must be valid UTF-8.
std::string normalize_nfc(std::string_view s);
// NFC always computed by utf8proc (no fast path); for tests.
std::string normalize_nfc_utf8proc(std::string_view s);
std::string normalize_nfd(std::string_view s);
std::string normalize_nfkc(std::string_view s);
std::string normalize_nfkd(std::string_view s);
std::string lowercase(std::string_view s);

// GPT-2 byte-to-unicode table: byte b <-> one printable code point.
const std::string& byte_to_unicode(unsigned char b);
// Returns the byte for a byte-level code point, or -1 if cp is not one.
int unicode_to_byte(char32_t cp);

}  // namespace reprox::tok
