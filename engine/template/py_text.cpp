#include "engine/template/py_text.hpp"

#include "engine/tokenizer/utf8_append.hpp"

#include <utf8proc.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace reprox::tmpl::py {

std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(0xDC00 | c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) {  // an undecodable byte, see decode()
    out.push_back(static_cast<char>(cp & 0xFF));
  } else {
    tok::utf8_append(out, cp);
  }
}

std::string encode(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, StripSide side, const std::string* chars) {
  if (is_ascii(s) && (chars == nullptr || is_ascii(*chars))) {
    auto drop = [&](char c) {
      return chars ? chars->find(c) != std::string::npos : is_space(static_cast<unsigned char>(c));
    };
    size_t b = 0, e = s.size();
    if (side != StripSide::Right)
      while (b < e && drop(s[b])) ++b;
    if (side != StripSide::Left)
      while (e > b && drop(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
  }
  auto cps = decode(s);
  std::vector<char32_t> set;
  if (chars) set = decode(*chars);
  auto drop = [&](char32_t c) {
    if (!chars) return is_space(c);
    for (char32_t x : set)
      if (x == c) return true;
    return false;
  };
  size_t b = 0, e = cps.size();
  if (side != StripSide::Right)
    while (b < e && drop(cps[b])) ++b;
  if (side != StripSide::Left)
    while (e > b && drop(cps[e - 1])) --e;
  return encode(std::vector<char32_t>(cps.begin() + b, cps.begin() + e));
}

namespace {
char32_t to_upper(char32_t c) { return c < 0x80 ? (c >= 'a' && c <= 'z' ? c - 32 : c) : utf8proc_toupper(c); }
char32_t to_lower(char32_t c) { return c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : utf8proc_tolower(c); }
char32_t to_title(char32_t c) { return c < 0x80 ? to_upper(c) : utf8proc_totitle(c); }
bool is_cased(char32_t c) { return to_upper(c) != c || to_lower(c) != c || utf8proc_category(c) == UTF8PROC_CATEGORY_LT; }

template <typename F>
std::string map_cps(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (char c : s) out.push_back(static_cast<char>(f(static_cast<unsigned char>(c))));
    return out;
  }
  for (char32_t c : decode(s)) append_utf8(out, f(c));
  return out;
}
}  // namespace

bool is_cased_upper(char32_t c) { return is_cased(c) && to_lower(c) != c; }
bool is_cased_lower(char32_t c) { return is_cased(c) && to_upper(c) != c; }

std::string upper(std::string_view s) {
  if (is_ascii(s)) return map_cps(s, to_upper);
  std::string out;
  out.reserve(s.size());
  for (char32_t c : decode(s)) {
    if (c == 0xDF) {
      out += "SS";  // the full (non-simple) uppercase mapping Python applies
    } else {
      append_utf8(out, to_upper(c));
    }
  }
  return out;
}
std::string lower(std::string_view s) { return map_cps(s, to_lower); }

std::string capitalize(std::string_view s) {
  bool first = true;
  return map_cps(s, [&](char32_t c) {
    char32_t r = first ? to_title(c) : to_lower(c);
    first = false;
    return r;
  });
}

std::string title(std::string_view s) {
  bool prev_cased = false;
  return map_cps(s, [&](char32_t c) {
    char32_t r = prev_cased ? to_lower(c) : to_title(c);
    prev_cased = is_cased(c);
    return r;
  });
}

std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      size_t k = s.find(*sep, pos);
      if (k == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, k - pos));
      pos = k + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  auto cps = decode(s);
  size_t i = 0, n = cps.size();
  while (true) {
    while (i < n && is_space(cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) >= maxsplit) {
      size_t e = n;
      while (e > i && is_space(cps[e - 1])) --e;
      out.push_back(encode(std::vector<char32_t>(cps.begin() + i, cps.begin() + e)));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(cps[j])) ++j;
    out.push_back(encode(std::vector<char32_t>(cps.begin() + i, cps.begin() + j)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::string* sep, long maxsplit) {
  if (maxsplit < 0) return split(s, sep, maxsplit);
  std::vector<std::string> rev;
  if (sep) {
    size_t end = s.size();
    while (static_cast<long>(rev.size()) < maxsplit && end >= sep->size()) {
      size_t k = s.rfind(*sep, end - sep->size());
      if (k == std::string_view::npos) break;
      rev.emplace_back(s.substr(k + sep->size(), end - k - sep->size()));
      end = k;
    }
    rev.emplace_back(s.substr(0, end));
  } else {
    auto cps = decode(s);
    size_t e = cps.size();
    while (true) {
      while (e > 0 && is_space(cps[e - 1])) --e;
      if (e == 0) break;
      if (static_cast<long>(rev.size()) >= maxsplit) {
        size_t b = 0;
        while (b < e && is_space(cps[b])) ++b;
        rev.push_back(encode(std::vector<char32_t>(cps.begin() + b, cps.begin() + e)));
        break;
      }
      size_t b = e;
      while (b > 0 && !is_space(cps[b - 1])) --b;
      rev.push_back(encode(std::vector<char32_t>(cps.begin() + b, cps.begin() + e)));
      e = b;
    }
  }
  return std::vector<std::string>(rev.rbegin(), rev.rend());
}

std::string replace(std::string_view s, std::string_view old, std::string_view with, long count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` between every code point
    auto cps = decode(s);
    long n = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || n < count) {
        out.append(with);
        ++n;
      }
      if (i < cps.size()) append_utf8(out, cps[i]);
    }
    return out;
  }
  size_t pos = 0;
  long n = 0;
  while (count < 0 || n < count) {
    size_t k = s.find(old, pos);
    if (k == std::string_view::npos) break;
    out.append(s.substr(pos, k - pos));
    out.append(with);
    pos = k + old.size();
    ++n;
  }
  out.append(s.substr(pos));
  return out;
}

void append_float_repr(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // e.g. "-1.2345e-07", shortest round-trip digits
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  int exp = std::stoi(sci.substr(e + 1));
  if (neg) out.push_back('-');
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (digits.size() <= static_cast<size_t>(exp) + 1) {
        out += digits;
        out.append(exp + 1 - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, exp + 1);
        out.push_back('.');
        out.append(digits, exp + 1, std::string::npos);
      }
    } else {
      out += "0.";
      out.append(-exp - 1, '0');
      out += digits;
    }
    return;
  }
  out.push_back(digits[0]);
  if (digits.size() > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  char eb[16];
  std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out += eb;
}

void append_str_repr(std::string& out, std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  out.push_back(q);
  for (char32_t c : decode(s)) {
    if (c == static_cast<char32_t>(q) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0xA0) || c == 0xAD || (c >= 0xDC80 && c <= 0xDCFF)) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned>(c & 0xFF));
      out += b;
    } else if (c == 0x2028 || c == 0x2029) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      out += b;
    } else {
      append_utf8(out, c);
    }
  }
  out.push_back(q);
}

}  // namespace reprox::tmpl::py
