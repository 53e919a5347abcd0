// The entities guard (policies/near_guards.hpp): names, identifiers, quoted
// strings, URLs and emails one message has and the other lacks, and shared
// words in another order.
#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "policies/near_detail.hpp"
#include "policies/near_guards.hpp"
#include "policies/near_text.hpp"

namespace reprox::policy::near {

namespace {

using namespace detail;

// Function words and fillers: they do not count for word order.
const WordSet kFunctionWords = {
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "with", "by", "from", "into", "about", "as", "and",
    "or", "but", "if", "so", "than", "then", "is", "are", "was", "were", "be", "been", "am", "do", "does",
    "did", "have", "has", "had", "i", "me", "my", "you", "your", "we", "our", "us", "it", "its", "they",
    "them", "their", "he", "she", "him", "her", "his", "this", "that", "these", "those", "there", "here",
    "what", "which", "who", "how", "why", "where", "when", "can", "could", "would", "should", "will", "may",
    "might", "must", "any", "some", "all", "just", "please", "pls", "plz", "kindly", "hey", "hi", "hello",
    "thanks", "thank", "thx", "quick", "question", "wondering", "up", "out", "el", "la", "los", "las", "un",
    "una", "de", "del", "al", "y", "o", "que", "en", "por", "para", "con", "mi", "mis", "tu", "su", "se",
    "lo", "es", "cómo", "como", "qué", "favor", "hola", "gracias"};

struct Entity {
  std::string shown;  // as written
  std::string norm;   // normalize(shown)
  bool fuzzy = false; // a one-letter typo still matches (long names)
};

bool is_sentence_end(char32_t c) {
  return c == U'.' || c == U'!' || c == U'?' || c == U':' || c == U';' || c == U'。' || c == U'！' ||
         c == U'？' || c == U'…';
}

bool is_wrapper(char32_t c) {
  return c == U'"' || c == U'\'' || c == U'`' || c == U'(' || c == U')' || c == U'[' || c == U']' ||
         c == U'{' || c == U'}' || c == U'<' || c == U'>' || c == U',' || c == U'¿' || c == U'¡' ||
         c == U'“' || c == U'”' || c == U'‘' || c == U'’' || c == U'«' || c == U'»' || is_sentence_end(c);
}

bool is_upper(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_LU; }
bool is_lower(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_LL; }

// The kind of a word stripped of its wrappers: an identifier, URL, email,
// acronym or capitalised name, or nothing ("").
const char* entity_kind(const std::u32string& w, bool sentence_start, bool shouting) {
  size_t upper = 0, lower = 0, digits = 0;
  bool camel = false, inner = false;
  for (size_t i = 0; i < w.size(); ++i) {
    upper += is_upper(w[i]);
    lower += is_lower(w[i]);
    digits += is_digit(w[i]);
    if (i > 0 && is_lower(w[i - 1]) && is_upper(w[i])) camel = true;
    const bool mid = i > 0 && i + 1 < w.size() && !is_wrapper(w[i - 1]) && !is_wrapper(w[i + 1]);
    const bool dot = w[i] == U'.' && i >= 2 && i + 2 < w.size();  // "os.path", not "e.g"
    if (mid && (dot || w[i] == U'_' || w[i] == U'/' || w[i] == U'@' || w[i] == U':')) inner = true;
  }
  if (upper + lower == 0) return "";
  if (inner || camel) return "identifier";
  if (shouting) return "";
  if ((upper >= 2 && lower == 0) || (upper >= 1 && digits >= 1)) return "acronym";
  if (upper >= 1 && is_upper(w[0]) && !sentence_start && w != U"I") return "name";
  return "";
}

// Quoted spans: "..." “...” «...» `...` and '...' opened after a space.
void add_quoted(const std::u32string& s, std::vector<Entity>& out) {
  static const std::array<std::pair<char32_t, char32_t>, 6> kPairs = {
      {{U'"', U'"'}, {U'“', U'”'}, {U'«', U'»'}, {U'`', U'`'}, {U'\'', U'\''}, {U'‘', U'’'}}};
  for (const auto& [open, close] : kPairs) {
    size_t i = 0;
    while ((i = s.find(open, i)) != std::u32string::npos) {
      if (open == U'\'' && i > 0 && !is_space(s[i - 1])) {
        ++i;
        continue;
      }
      size_t end = s.find(close, i + 1);
      while (open == U'\'' && end != std::u32string::npos && end + 1 < s.size() && is_letter(s[end + 1])) {
        end = s.find(close, end + 1);  // an apostrophe: "don't"
      }
      if (end == std::u32string::npos) break;
      std::string shown;
      for (size_t k = i + 1; k < end; ++k) append_utf8(shown, s[k]);
      if (!normalize(shown).empty()) out.push_back({shown, normalize(shown), false});
      i = end + 1;
    }
  }
}

std::vector<Entity> entities_of(std::string_view text) {
  const std::u32string s = decode_utf8(nfkc(text, false));
  size_t upper = 0, lower = 0;
  for (char32_t c : s) upper += is_upper(c), lower += is_lower(c);
  const bool shouting = lower == 0 || upper > lower;
  std::vector<Entity> out;
  bool sentence_start = true;
  size_t i = 0;
  while (i < s.size()) {
    if (is_space(s[i])) {
      if (s[i] == U'\n') sentence_start = true;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && !is_space(s[end])) ++end;
    size_t b = i, e = end;
    while (b < e && is_wrapper(s[b])) ++b;
    while (e > b && is_wrapper(s[e - 1])) --e;
    const std::u32string core = s.substr(b, e - b);
    const char* kind = entity_kind(core, sentence_start, shouting);
    if (*kind) {
      std::string shown;
      for (char32_t c : core) append_utf8(shown, c);
      out.push_back({shown, normalize(shown), std::string(kind) != "identifier" && core.size() >= 6});
    }
    sentence_start = b == e || std::any_of(s.begin() + e, s.begin() + end, is_sentence_end) ||
                     (e - b == 1 && (s[b] == U'-' || s[b] == U'*'));
    i = end;
  }
  add_quoted(s, out);
  return out;
}

// The normalized other message, as a padded line and as a set of words.
struct Other {
  std::string padded;  // " w1 w2 ... wn "
  std::unordered_set<std::string> words;
};

bool mentions(const Entity& e, const Other& other) {
  const bool one_word = e.norm.find(' ') == std::string::npos;
  if (one_word ? other.words.count(e.norm) > 0 : other.padded.find(" " + e.norm + " ") != std::string::npos) {
    return true;
  }
  if (!e.fuzzy) return false;
  const std::u32string target = decode_utf8(e.norm);
  return std::any_of(other.words.begin(), other.words.end(),
                     [&](const std::string& w) { return w.size() >= 5 && within_one_edit(decode_utf8(w), target); });
}

Other other_of(std::string_view normalized) {
  return Other{" " + std::string(normalized) + " ", word_set(normalized)};
}

// The first entity of `from` that `to` does not mention.
const Entity* missing_entity(const std::vector<Entity>& from, const Other& to) {
  for (const Entity& e : from) {
    if (!mentions(e, to)) return &e;
  }
  return nullptr;
}

// The words that count for order; with `stem`, a plural "s" dropped
// ("employee's" and "employees" are "employee").
Words content_words(std::string_view normalized, bool stem) {
  Words out;
  for (auto& w : split(normalized)) {
    if (kFunctionWords.count(w)) continue;
    if (stem && w.size() >= 4 && w.back() == 's' && w[w.size() - 2] != 's') w.pop_back();
    out.push_back(std::move(w));
  }
  return out;
}

// The words of `words` that the other list also has (as many times as both
// have them), in order.
Words shared_in_order(const Words& words, const Words& other) {
  std::unordered_map<std::string_view, int> left;
  for (const auto& w : other) ++left[w];
  Words out;
  for (const auto& w : words) {
    auto it = left.find(w);
    if (it != left.end() && it->second > 0) --it->second, out.push_back(w);
  }
  return out;
}

// Length of a common subsequence of a and b, the longest one that stays
// within a band around the diagonal (so at most the longest overall): the
// messages compared are near-duplicates, their alignment is near-diagonal.
size_t banded_lcs(const Words& a, const Words& b) {
  const size_t n = a.size(), m = b.size();
  const size_t band = 64 + (n > m ? n - m : m - n);
  std::vector<uint32_t> prev(m + 1, 0), cur(m + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    const size_t lo = i > band ? i - band : 1, hi = std::min(m, i + band);
    for (size_t j = lo; j <= hi; ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return *std::max_element(prev.begin(), prev.end());
}

// "" when the content words both messages have come in the same order (their
// longest common subsequence holds every word they share), else the shared
// words of each from the first that differs.
std::string reordered(const Words& a, const Words& b) {
  const Words sa = shared_in_order(a, b), sb = shared_in_order(b, a);
  if (sa == sb || banded_lcs(a, b) == sa.size()) return "";
  size_t k = 0;
  while (k < sa.size() && sa[k] == sb[k]) ++k;
  const auto three = [k](const Words& w) { return Words(w.begin() + k, w.begin() + std::min(w.size(), k + 3)); };
  return joined(three(sa)) + " vs " + joined(three(sb));
}

}  // namespace

GuardVerdict entities_guard(std::string_view a, std::string_view b) {
  const std::string na = normalize(a), nb = normalize(b);
  const std::vector<Entity> ea = entities_of(a), eb = entities_of(b);
  if (const Entity* e = missing_entity(ea, other_of(nb))) return vetoed("entities", "only in the first: " + e->shown);
  if (const Entity* e = missing_entity(eb, other_of(na))) return vetoed("entities", "only in the second: " + e->shown);
  std::string swapped = reordered(content_words(na, false), content_words(nb, false));
  if (swapped.empty()) swapped = reordered(content_words(na, true), content_words(nb, true));
  if (!swapped.empty()) return vetoed("entities", "same words, other order: " + swapped);
  return {};
}

}  // namespace reprox::policy::near
