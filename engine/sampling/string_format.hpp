// The JSON Schema string formats a guide enforces, as byte-at-a-time
// recognizers of a string's characters (between its quotes):
//   date       RFC 3339 full-date, days of the real calendar (2024-02-29
//              yes, 2023-02-29 no);
//   time       RFC 3339 full-time: hh:mm:ss, an optional fraction (at most 9
//              digits), and an offset, Z or +hh:mm / -hh:mm; seconds up to
//              59 (no leap second: Python's datetime refuses 60);
//   date-time  a date, 'T', a time;
//   uuid       8-4-4-4-12 hex digits;
//   ipv4       a dotted quad, each part 0-255 without leading zeros.
// Other formats (email, uri, ...) are annotations: kNone.
//
// A small value (no heap); copy it to try a continuation. Every prefix it
// takes can be completed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reprox::engine {

class StringFormat {
 public:
  enum Kind : uint8_t { kNone, kDate, kTime, kDateTime, kUuid, kIpv4 };

  // The enforced format a "format" keyword names, or kNone.
  static Kind parse(std::string_view name);
  // The fewest and the most characters a string of the format has.
  static void length_range(Kind kind, uint32_t* shortest, uint32_t* longest);

  StringFormat() = default;
  explicit StringFormat(Kind kind) : kind_(kind) {}

  Kind kind() const { return kind_; }
  // Takes one character of the string; false when no string of the format
  // begins with the characters so far plus this one.
  bool feed(uint8_t byte);
  // The characters so far are a whole string of the format.
  bool complete() const;
  // Bytes that tell states apart: equal keys take the same continuations.
  void append_key(std::string* out) const;

 private:
  void next_item();

  Kind kind_ = kNone;
  uint8_t item_ = 0;       // index into the format's program of fields
  uint8_t digits_ = 0;     // digits of the current field (fraction digits in a fraction)
  bool in_fraction_ = false;
  uint16_t value_ = 0;     // the current field's value so far
  uint16_t year_ = 0;      // date: for the days of February
  uint8_t month_ = 0;
};

}  // namespace reprox::engine
