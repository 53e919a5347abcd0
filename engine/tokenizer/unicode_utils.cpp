#include "engine/tokenizer/unicode_utils.hpp"

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <stdexcept>

namespace reprox::tok {

char32_t utf8_next(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const size_t n = utf8_len(b0);
  if (n == 1 || i + n > s.size()) {
    ++i;
    return b0;
  }
  char32_t cp = b0 & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

char32_t utf8_prev(std::string_view s, size_t end, size_t& start) {
  size_t j = end;
  while (j > 0) {
    --j;
    if ((static_cast<unsigned char>(s[j]) & 0xC0) != 0x80) break;
  }
  start = j;
  size_t k = j;
  return utf8_next(s, k);
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid; on invalid,
// `bad` receives the length of the maximal invalid subpart (>= 1).
size_t valid_seq_len(std::string_view s, size_t i, size_t& bad) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const size_t left = s.size() - i;
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  bad = 1;
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (left >= 2 && cont(at(1))) return 2;
    return 0;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (left < 2) return 0;
    const unsigned char b1 = at(1);
    const bool ok1 = (b0 == 0xE0)   ? (b1 >= 0xA0 && b1 <= 0xBF)
                     : (b0 == 0xED) ? (b1 >= 0x80 && b1 <= 0x9F)
                                    : cont(b1);
    if (!ok1) return 0;
    bad = 2;
    if (left >= 3 && cont(at(2))) return 3;
    return 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (left < 2) return 0;
    const unsigned char b1 = at(1);
    const bool ok1 = (b0 == 0xF0)   ? (b1 >= 0x90 && b1 <= 0xBF)
                     : (b0 == 0xF4) ? (b1 >= 0x80 && b1 <= 0x8F)
                                    : cont(b1);
    if (!ok1) return 0;
    bad = 2;
    if (left < 3 || !cont(at(2))) return 0;
    bad = 3;
    if (left >= 4 && cont(at(3))) return 4;
    return 0;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t n = valid_seq_len(s, i, bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t bad = 0;
    const size_t n = valid_seq_len(bytes, i, bad);
    if (n > 0) {
      out.append(bytes.data() + i, n);
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += bad;
    }
  }
  return out;
}

bool is_unicode_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool is_word_char(char32_t cp) {
  if (cp == '_') return true;
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

namespace {

bool all_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

std::string utf8proc_transform(std::string_view s, int options) {
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &dst,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::string(s);  // invalid input: leave unchanged
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

}  // namespace

// True when `cp` is NFC_Quick_Check=Yes, has canonical combining class 0 and
// composes with no following starter, so a string made only of such code
// points is already NFC. Conservative: ranges checked against the Unicode
// composition tables (Latin below the combining marks, Cyrillic letters,
// Hebrew/Arabic letters, general punctuation without the U+2000/2001
// singletons, kana without the voicing marks, CJK ideographs, Hangul
// syllables, emoji planes).
bool nfc_inert(char32_t cp) {
  return cp < 0x300 || (cp >= 0x400 && cp <= 0x482) || (cp >= 0x5D0 && cp <= 0x5EA) ||
         (cp >= 0x621 && cp <= 0x64A && cp != 0x627 && cp != 0x648 && cp != 0x64A) ||
         (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205E) || (cp >= 0x3000 && cp <= 0x3029) ||
         (cp >= 0x3030 && cp <= 0x3098) ||
         (cp >= 0x30A0 && cp <= 0x30FF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0x1F000 && cp <= 0x1FAFF);
}

namespace {

bool already_nfc(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (!nfc_inert(utf8_next(s, i))) return false;
  }
  return true;
}

}  // namespace

std::string normalize_nfc(std::string_view s) {
  if (already_nfc(s)) return std::string(s);
  return utf8proc_transform(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
}
std::string normalize_nfc_utf8proc(std::string_view s) {
  return utf8proc_transform(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
}
std::string normalize_nfd(std::string_view s) {
  if (all_ascii(s)) return std::string(s);
  return utf8proc_transform(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
}
std::string normalize_nfkc(std::string_view s) {
  if (all_ascii(s)) return std::string(s);
  return utf8proc_transform(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
}
std::string normalize_nfkd(std::string_view s) {
  if (all_ascii(s)) return std::string(s);
  return utf8proc_transform(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const char32_t cp = utf8_next(s, i);
    utf8_append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

namespace {

struct ByteLevelTables {
  std::array<std::string, 256> to_unicode;
  std::array<int, 324> to_byte{};
  ByteLevelTables() {
    to_byte.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      utf8_append(to_unicode[b], cp);
      to_byte[cp] = b;
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t;
  return t;
}

}  // namespace

const std::string& byte_to_unicode(unsigned char b) { return tables().to_unicode[b]; }

int unicode_to_byte(char32_t cp) {
  if (cp >= 324) return -1;
  return tables().to_byte[cp];
}

}  // namespace reprox::tok
