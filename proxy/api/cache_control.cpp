#include "proxy/api/cache_control.hpp"

#include <cstdint>
#include <string>

namespace reprox::api {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Unsigned decimal, clamped to INT64_MAX; nullopt unless all digits.
std::optional<int64_t> parse_seconds(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    int digit = c - '0';
    if (value > (INT64_MAX - digit) / 10) {
      value = INT64_MAX;
    } else {
      value = value * 10 + digit;
    }
  }
  return value;
}

// Splits on commas outside double quotes.
template <typename F>
void for_each_directive(std::string_view header, F&& f) {
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i <= header.size(); ++i) {
    if (i < header.size()) {
      char c = header[i];
      if (c == '"') quoted = !quoted;
      if (c == '\\' && quoted && i + 1 < header.size()) {
        ++i;
        continue;
      }
      if (c != ',' || quoted) continue;
    }
    f(trim(header.substr(start, i - start)));
    start = i + 1;
  }
}

std::string_view unquote(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return trim(v.substr(1, v.size() - 2));
  return v;
}

}  // namespace

CacheDirectives parse_cache_control(std::string_view header_value) {
  CacheDirectives out;
  for_each_directive(header_value, [&](std::string_view entry) {
    if (entry.empty()) return;
    size_t eq = entry.find('=');
    std::string name = lower(trim(entry.substr(0, eq)));
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : unquote(entry.substr(eq + 1));
    if (name == "no-cache") {
      out.no_cache = true;  // also the `no-cache="field"` form
    } else if (name == "no-store") {
      out.no_store = true;
    } else if (name == "only-if-cached") {
      out.only_if_cached = true;
    } else if (name == "max-age") {
      auto seconds = parse_seconds(value);
      if (!seconds) return;
      if (!out.max_age_seconds || *seconds < *out.max_age_seconds) out.max_age_seconds = seconds;
    }
  });
  return out;
}

CacheDirectives merge_cache_directives(const CacheDirectives& body, const CacheDirectives& header,
                                       std::optional<std::string_view> namespace_header) {
  CacheDirectives out = body;
  out.no_cache = body.no_cache || header.no_cache;
  out.no_store = body.no_store || header.no_store;
  out.only_if_cached = body.only_if_cached || header.only_if_cached;
  if (header.max_age_seconds &&
      (!out.max_age_seconds || *header.max_age_seconds < *out.max_age_seconds))
    out.max_age_seconds = header.max_age_seconds;
  if (namespace_header && !namespace_header->empty()) out.ns = std::string(*namespace_header);
  return out;
}

}  // namespace reprox::api
