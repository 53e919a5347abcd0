#pragma once
// Readable names for the cases of value-parameterized tests: ctest lists
// "Table/KeyEquality.SameKey/07_whitespace_in_content" instead of the
// parameter's bytes.
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace reprox::testing_support {

// "<index, two digits>_<text with every run of other characters as one '_'>",
// at most 48 characters: the index keeps names unique, the text tells the case.
inline std::string case_name(size_t index, std::string_view text) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02zu", index);
  std::string out = prefix;
  bool gap = true;
  for (char c : text) {
    if (out.size() >= 48) break;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap) out.push_back('_');
      out.push_back(c);
      gap = false;
    } else {
      gap = true;
    }
  }
  return out;
}

}  // namespace reprox::testing_support
