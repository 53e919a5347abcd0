// Narrowing a range of a sorted string list by the next byte: the step the
// choice, key-name and enum recognizers share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace reprox::engine::internal {

// `list`'s entries [lo, hi) are sorted and share their first `pos` bytes
// (`text(entry)` gives an entry's string). Returns the sub-range whose byte
// at `pos` is `byte` (empty: lo == hi). An entry that ends at `pos` sorts
// first and is never in it.
template <class List, class Text>
std::pair<uint32_t, uint32_t> narrow_by_byte(const List& list, uint32_t lo, uint32_t hi, uint32_t pos, uint8_t byte,
                                             Text text) {
  while (lo < hi && (text(list[lo]).size() <= pos || static_cast<uint8_t>(text(list[lo])[pos]) < byte)) ++lo;
  uint32_t end = lo;
  while (end < hi && static_cast<uint8_t>(text(list[end])[pos]) == byte) ++end;
  return {lo, end};
}

inline const std::string& itself(const std::string& s) { return s; }

}  // namespace reprox::engine::internal
