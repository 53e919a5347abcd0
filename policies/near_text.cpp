#include "policies/near_text.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/utf8.hpp"

namespace reprox::policy::near {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Feature weights: character bigrams make a typo cost less, trigrams and
// words keep word order and whole words apart.
constexpr float kBigramWeight = 1.0F;
constexpr float kTrigramWeight = 1.0F;
constexpr float kWordWeight = 0.5F;

// Length of the well-formed UTF-8 sequence at s[i], or 0.
size_t sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
  auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(at(1)) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const unsigned char b1 = at(1);
    const bool ok = b0 == 0xE0 ? (b1 >= 0xA0 && b1 <= 0xBF) : b0 == 0xED ? (b1 >= 0x80 && b1 <= 0x9F) : cont(b1);
    return ok && cont(at(2)) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned char b1 = at(1);
    const bool ok = b0 == 0xF0 ? (b1 >= 0x90 && b1 <= 0xBF) : b0 == 0xF4 ? (b1 >= 0x80 && b1 <= 0x8F) : cont(b1);
    return ok && cont(at(2)) && cont(at(3)) ? 4 : 0;
  }
  return 0;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  for (char32_t cp : decode_utf8(text)) append_utf8(out, cp);
  return out;
}

}  // namespace

// By utf8proc; default ignorables (zero-width spaces, soft hyphens) removed.
std::string nfkc(std::string_view text, bool casefold) {
  const std::string valid = valid_utf8(text);
  utf8proc_uint8_t* dst = nullptr;
  const int fold = casefold ? UTF8PROC_CASEFOLD : 0;
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                                                      UTF8PROC_IGNORE | fold);
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid.data()),
                                          static_cast<utf8proc_ssize_t>(valid.size()), &dst, options);
  if (n < 0) return valid;
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

namespace {

bool is_apostrophe(char32_t cp) { return cp == U'\'' || cp == 0x2019 || cp == 0x02BC; }

bool is_letter(char32_t cp) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}

// Kept as text: letters, marks, numbers, and math, currency and other symbols.
bool is_kept(char32_t cp) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SO:
      return cp != kReplacement;
    default:
      return false;
  }
}

// 64-bit FNV-1a with a one-byte kind prefix, so that a 3-gram and a word of
// the same bytes land apart.
uint64_t fnv1a(char kind, std::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  auto step = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ULL; };
  step(static_cast<unsigned char>(kind));
  for (char c : bytes) step(static_cast<unsigned char>(c));
  return h;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = std::min(text.find(' ', i), text.size());
    if (end > i) out.push_back(text.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

// Politeness fillers, as normalized word sequences, longest first.
const std::vector<std::vector<std::string_view>>& fillers() {
  static const std::vector<std::vector<std::string_view>> kFillers = {
      {"can", "you", "tell", "me"}, {"could", "you", "tell", "me"}, {"thanks", "in", "advance"},
      {"i", "was", "wondering"}, {"can", "you", "help"}, {"could", "you", "help"}, {"quick", "question"},
      {"just", "wondering"}, {"thank", "you"}, {"hey", "there"}, {"good", "morning"}, {"good", "afternoon"},
      {"good", "evening"}, {"can", "you"}, {"could", "you"}, {"would", "you"}, {"por", "favor"},
      {"please"}, {"pls"}, {"plz"}, {"kindly"}, {"hey"}, {"hi"}, {"hello"}, {"thanks"}, {"thx"},
      {"gracias"}, {"hola"}};
  return kFillers;
}

// Fillers only right after another filler: "can you please tell me".
const std::vector<std::vector<std::string_view>>& trailing_fillers() {
  static const std::vector<std::vector<std::string_view>> kTrailing = {{"tell", "me"}, {"help", "me"}, {"help"}};
  return kTrailing;
}

size_t filler_length(const std::vector<std::vector<std::string_view>>& list,
                     const std::vector<std::string_view>& words, size_t i) {
  for (const auto& f : list) {
    if (i + f.size() <= words.size() && std::equal(f.begin(), f.end(), words.begin() + i)) return f.size();
  }
  return 0;
}

// The words of `words` without fillers; all of them when nothing else is left.
std::vector<std::string_view> without_fillers(const std::vector<std::string_view>& words) {
  std::vector<std::string_view> kept;
  bool after_filler = false;
  size_t i = 0;
  while (i < words.size()) {
    size_t skip = filler_length(fillers(), words, i);
    if (skip == 0 && after_filler) skip = filler_length(trailing_fillers(), words, i);
    if (skip == 0) kept.push_back(words[i]);
    after_filler = skip > 0;
    i += std::max<size_t>(skip, 1);
  }
  return kept.empty() ? words : kept;
}

using Counts = std::vector<std::pair<uint32_t, float>>;

void add_feature(Counts& counts, char kind, std::string_view bytes, float weight) {
  constexpr uint64_t kMask = (1ULL << kFeatureBits) - 1;
  counts.emplace_back(static_cast<uint32_t>(fnv1a(kind, bytes) & kMask), weight);
}

// " w1 w2 ... wn ", without the space between two Han or kana characters
// (Chinese and Japanese put none between words).
std::u32string padded_line(const std::vector<std::string_view>& words) {
  std::u32string line = U" ";
  for (auto w : words) {
    const std::u32string cps = decode_utf8(w);
    if (line.size() > 1 && is_cjk(line[line.size() - 2]) && is_cjk(cps.front())) line.pop_back();
    line += cps + U" ";
  }
  return line;
}

// Character n-grams of the padded line (code points, not bytes).
void add_char_grams(Counts& counts, const std::u32string& line, size_t n, float weight) {
  const char kind = static_cast<char>('0' + n);
  for (size_t i = 0; i + n <= line.size(); ++i) {
    std::string gram;
    for (size_t k = 0; k < n; ++k) append_utf8(gram, line[i + k]);
    add_feature(counts, kind, gram, weight);
  }
}

// Word unigrams; a run of Han or kana characters gives one word per character.
void add_words(Counts& counts, const std::vector<std::string_view>& words, float weight) {
  for (auto w : words) {
    std::string rest;
    for (char32_t cp : decode_utf8(w)) {
      if (!is_cjk(cp)) {
        append_utf8(rest, cp);
        continue;
      }
      std::string one;
      append_utf8(one, cp);
      add_feature(counts, 'w', one, weight);
    }
    if (!rest.empty()) add_feature(counts, 'w', rest, weight);
  }
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = sequence_length(text, i);
    if (n == 0) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    const auto b0 = static_cast<unsigned char>(text[i]);
    char32_t cp = n == 1 ? b0 : b0 & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) { utf8::append(out, cp); }

bool is_cjk(char32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

std::string normalize(std::string_view text) {
  const std::u32string cps = decode_utf8(nfkc(text, true));
  std::string out;
  bool gap = false;
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t cp = cps[i];
    if (is_apostrophe(cp) && i > 0 && i + 1 < cps.size() && is_letter(cps[i - 1]) && is_letter(cps[i + 1])) {
      continue;  // "don't" -> "dont"
    }
    if (!is_kept(cp)) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out.push_back(' ');
    gap = false;
    append_utf8(out, cp);
  }
  return out;
}

std::vector<std::string> words_of(std::string_view text) {
  const std::string normalized = normalize(text);
  std::vector<std::string> out;
  for (auto w : split_spaces(normalized)) out.emplace_back(w);
  return out;
}

Features features_of(std::string_view normalized) {
  const std::vector<std::string_view> words = without_fillers(split_spaces(normalized));
  Counts counts;
  if (words.empty()) return {};
  const std::u32string line = padded_line(words);
  add_char_grams(counts, line, 2, kBigramWeight);
  add_char_grams(counts, line, 3, kTrigramWeight);
  add_words(counts, words, kWordWeight);
  std::sort(counts.begin(), counts.end());
  Features f;
  for (const auto& [index, weight] : counts) {
    if (!f.entries.empty() && f.entries.back().first == index) {
      f.entries.back().second += weight;
    } else {
      f.entries.emplace_back(index, weight);
    }
  }
  double norm = 0;
  for (const auto& e : f.entries) norm += static_cast<double>(e.second) * e.second;
  norm = std::sqrt(norm);
  for (auto& e : f.entries) e.second = static_cast<float>(e.second / norm);
  return f;
}

double cosine(const Features& a, const Features& b) {
  if (a.entries.empty() || b.entries.empty()) return 0.0;
  if (a.entries == b.entries) return 1.0;  // exactly 1, not 1 - rounding
  double dot = 0;
  auto i = a.entries.begin();
  auto j = b.entries.begin();
  while (i != a.entries.end() && j != b.entries.end()) {
    if (i->first < j->first) {
      ++i;
    } else if (j->first < i->first) {
      ++j;
    } else {
      dot += static_cast<double>(i->second) * j->second;
      ++i;
      ++j;
    }
  }
  return std::clamp(dot, 0.0, 1.0);
}

uint64_t simhash(const Features& f) {
  std::array<double, 64> sums{};
  for (const auto& [index, weight] : f.entries) {
    const uint64_t h = splitmix64(index);
    for (int bit = 0; bit < 64; ++bit) sums[bit] += ((h >> bit) & 1) ? weight : -weight;
  }
  uint64_t out = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (sums[bit] > 0) out |= 1ULL << bit;
  }
  return out;
}

std::array<uint32_t, kBands> band_keys(uint64_t simhash) {
  std::array<uint32_t, kBands> keys{};
  constexpr uint64_t kMask = (1ULL << kBandBits) - 1;
  for (int band = 0; band < kBands; ++band) {
    keys[band] = (static_cast<uint32_t>(band) << 24) | static_cast<uint32_t>((simhash >> (band * kBandBits)) & kMask);
  }
  return keys;
}

}  // namespace reprox::policy::near
