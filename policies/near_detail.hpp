// Small helpers shared by the near-duplicate sources (policies/near_*.cpp);
// not an interface of its own.
#pragma once

#include <utf8proc.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "policies/near_guards.hpp"
#include "policies/near_text.hpp"

namespace reprox::policy::near::detail {

using Words = std::vector<std::string>;
using WordSet = std::unordered_set<std::string_view>;

// The words of an already normalized text.
inline Words split(std::string_view normalized) {
  Words out;
  size_t i = 0;
  while (i < normalized.size()) {
    const size_t end = std::min(normalized.find(' ', i), normalized.size());
    if (end > i) out.emplace_back(normalized.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

inline std::string joined(const Words& words) {
  if (words.empty()) return "(none)";
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

inline GuardVerdict vetoed(const char* guard, std::string why) { return GuardVerdict{true, guard, std::move(why)}; }

inline GuardVerdict unless_equal(const char* guard, const char* what, const Words& a, const Words& b) {
  if (a == b) return {};
  return vetoed(guard, std::string(what) + " differ: " + joined(a) + " vs " + joined(b));
}

inline std::string utf8(char32_t cp) {
  std::string out;
  append_utf8(out, cp);
  return out;
}

inline bool is_digit(char32_t cp) { return cp >= U'0' && cp <= U'9'; }

inline bool is_space(char32_t cp) {
  if (cp == U' ' || (cp >= U'\t' && cp <= U'\r')) return true;
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

inline bool is_letter(char32_t cp) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) || cat == UTF8PROC_CATEGORY_MN;
}

// At most one insertion, deletion, substitution or swap of two neighbours.
inline bool within_one_edit(const std::u32string& a, const std::u32string& b) {
  if (a == b) return true;
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > 1) return false;
  size_t p = 0;
  while (p < n && p < m && a[p] == b[p]) ++p;
  if (n == m) {
    if (a.compare(p + 1, n, b, p + 1, m) == 0) return !is_digit(a[p]) && !is_digit(b[p]);
    return p + 1 < n && a[p] == b[p + 1] && a[p + 1] == b[p] && a.compare(p + 2, n, b, p + 2, m) == 0;
  }
  return n > m ? a.compare(p + 1, n, b, p, m) == 0 : a.compare(p, n, b, p + 1, m) == 0;
}

inline std::unordered_set<std::string> word_set(std::string_view normalized) {
  std::unordered_set<std::string> out;
  for (auto& w : split(normalized)) out.insert(std::move(w));
  return out;
}

}  // namespace reprox::policy::near::detail
