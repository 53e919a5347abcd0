// The language guard (policies/near_guards.hpp): writing systems, and a
// stop-word vote among Latin-script languages.
#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "policies/near_guards.hpp"
#include "policies/near_text.hpp"

namespace reprox::policy::near {

namespace {

using Words = std::vector<std::string>;
using WordSet = std::unordered_set<std::string_view>;

enum Script { kNone, kLatin, kGreek, kCyrillic, kHebrew, kArabic, kDevanagari, kThai, kHangul, kKana, kHan, kCount };
const char* const kScriptNames[] = {"",       "Latin", "Greek",  "Cyrillic", "Hebrew", "Arabic",
                                    "Devanagari", "Thai", "Hangul", "Kana",     "Han"};

Script script_of(char32_t c) {
  if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) ||
      (c >= 0x1E00 && c <= 0x1EFF)) return kLatin;
  if (c < 0x370) return kNone;
  if (c <= 0x3FF) return kGreek;
  if (c >= 0x400 && c <= 0x52F) return kCyrillic;
  if (c >= 0x590 && c <= 0x5FF) return kHebrew;
  if ((c >= 0x600 && c <= 0x6FF) || (c >= 0x750 && c <= 0x77F)) return kArabic;
  if (c >= 0x900 && c <= 0x97F) return kDevanagari;
  if (c >= 0xE00 && c <= 0xE7F) return kThai;
  if ((c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3130 && c <= 0x318F)) return kHangul;
  if (c >= 0x3040 && c <= 0x30FF) return kKana;
  if (is_cjk(c)) return kHan;
  return kNone;
}

// The script with most letters ("" for none); Han with any kana is Japanese.
std::string main_script(std::string_view text) {
  std::array<size_t, kCount> counts{};
  for (char32_t c : decode_utf8(text)) ++counts[script_of(c)];
  if (counts[kKana] > 0) {
    const size_t japanese = counts[kKana] + counts[kHan];
    counts[kKana] = counts[kHan] = 0;
    size_t most = 0;
    for (int k = kLatin; k < kCount; ++k) most = std::max(most, counts[k]);
    if (japanese >= most) return "Japanese";
  }
  int best = kNone;
  for (int k = kLatin; k < kCount; ++k) {
    if (counts[k] > counts[best] || (best == kNone && counts[k] > 0)) best = k;
  }
  return kScriptNames[best];
}

struct Lexicon {
  const char* language;
  WordSet words;
};

const std::array<Lexicon, 6>& lexicons() {
  static const std::array<Lexicon, 6> kLexicons = {{
      {"en", {"the", "is", "are", "how", "what", "why", "where", "when", "which", "do", "does", "did", "can",
              "could", "should", "would", "i", "my", "you", "your", "it", "to", "of", "and", "for", "with",
              "this", "that", "have", "has", "there", "not", "from", "get", "be", "an", "on", "after"}},
      {"es", {"el", "los", "las", "es", "son", "cómo", "qué", "por", "para", "con", "mi", "mis", "puedo",
              "una", "del", "al", "está", "hay", "cuál", "dónde", "cuándo", "y", "lo", "su", "sus", "pero",
              "también", "sin", "tengo", "mí", "porque", "cuenta", "mis"}},
      {"fr", {"le", "les", "est", "sont", "comment", "pourquoi", "où", "avec", "pour", "mon", "ma", "mes",
              "je", "vous", "une", "des", "du", "au", "et", "ne", "pas", "dans", "sur", "ce", "cette", "peux",
              "puis", "quel", "quelle", "mot", "compte"}},
      {"de", {"der", "die", "das", "ist", "sind", "wie", "was", "warum", "wo", "mit", "für", "mein", "meine",
              "ich", "sie", "ein", "eine", "und", "nicht", "auf", "zu", "den", "dem", "kann", "wann", "mich",
              "mir", "konto", "ändern"}},
      {"pt", {"o", "os", "é", "são", "como", "porque", "onde", "com", "meu", "minha", "eu", "você", "um",
              "uma", "do", "da", "dos", "das", "no", "na", "em", "não", "posso", "senha", "conta", "quando"}},
      {"it", {"il", "gli", "è", "sono", "come", "perché", "dove", "con", "per", "mio", "mia", "io", "un",
              "una", "della", "di", "che", "non", "posso", "sul", "nel", "cosa", "quando", "mi"}},
  }};
  return kLexicons;
}

// The language a Latin text is clearly in, else "".
std::string latin_language(std::string_view text) {
  const Words words = words_of(text);
  std::array<int, 6> scores{};
  for (size_t k = 0; k < lexicons().size(); ++k) {
    for (const auto& w : words) scores[k] += lexicons()[k].words.count(w) ? 1 : 0;
  }
  std::array<int, 6> sorted = scores;
  std::sort(sorted.rbegin(), sorted.rend());
  if (sorted[0] < 2 || sorted[0] < sorted[1] + 2) return "";
  const size_t best = static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  return lexicons()[best].language;
}

}  // namespace

GuardVerdict language_guard(std::string_view a, std::string_view b) {
  const std::string sa = main_script(a), sb = main_script(b);
  if (!sa.empty() && !sb.empty() && sa != sb) return {true, "language", "scripts differ: " + sa + " vs " + sb};
  if (sa != "Latin" || sb != "Latin") return {};
  const std::string la = latin_language(a), lb = latin_language(b);
  if (!la.empty() && !lb.empty() && la != lb) return {true, "language", "languages differ: " + la + " vs " + lb};
  return {};
}

}  // namespace reprox::policy::near
