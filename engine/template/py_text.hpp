// Python string semantics over UTF-8: code points, whitespace, case mapping,
// repr() of floats and strings. Python strings index by code point; these
// helpers let the interpreter do the same on std::string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reprox::tmpl::py {

// Decodes UTF-8; invalid bytes decode as U+FFFD-free raw values (byte | 0xDC00,
// like Python's surrogateescape) so re-encoding gives the original bytes.
std::vector<char32_t> decode(std::string_view s);
void append_utf8(std::string& out, char32_t cp);
std::string encode(const std::vector<char32_t>& cps);
size_t length(std::string_view s);  // number of code points
bool is_ascii(std::string_view s);

bool is_space(char32_t cp);  // str.isspace()
enum class StripSide { Left, Right, Both };
// str.strip()/lstrip()/rstrip(); chars == nullptr strips whitespace.
std::string strip(std::string_view s, StripSide side, const std::string* chars = nullptr);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);  // str.capitalize()
std::string title(std::string_view s);       // str.title()
bool is_cased_upper(char32_t cp);
bool is_cased_lower(char32_t cp);

// str.split(sep, maxsplit); sep == nullptr splits on whitespace runs.
std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::string* sep, long maxsplit);
std::string replace(std::string_view s, std::string_view old, std::string_view with, long count);

void append_float_repr(std::string& out, double d);  // repr(float)
void append_str_repr(std::string& out, std::string_view s);  // repr(str)

}  // namespace reprox::tmpl::py
