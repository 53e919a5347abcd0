// Range bounds on a JSON number (minimum, maximum and their exclusive
// forms), and the question a recognizer asks after each byte of a number:
// can the digits written so far still end inside the range?
//
// Values are fixed point: integers in units of 10^-9 (kScale per unit), in
// 128 bits. A bounded number is written without an exponent and with at
// most kMaxFraction fraction digits, so every value it can take is a whole
// number of those units and the answers below are exact. Bounds are held to
// magnitudes up to 10^18; the digits of a number may run past that (up to
// 10^19, where they saturate) when nothing bounds it from that side.
//
// Pure values, no heap; copy freely.
#pragma once

#include <cstdint>
#include <string>

namespace reprox::engine {

using Fixed = __int128;

inline constexpr int kMaxFraction = 9;
inline constexpr Fixed kScale = 1'000'000'000;  // 10^kMaxFraction
inline constexpr Fixed kMaxBound = Fixed{1'000'000'000'000'000'000} * kScale;  // 10^18 units
inline constexpr uint64_t kHugeWhole = 10'000'000'000'000'000'000u;  // whole parts saturate here
inline constexpr Fixed kHuge = Fixed{kHugeWhole} * kScale;
inline constexpr Fixed kNoLowerBound = -kHuge * 10;
inline constexpr Fixed kNoUpperBound = kHuge * 10;

// An inclusive range [lo, hi] in fixed point; the defaults bound nothing.
struct NumberRange {
  Fixed lo = kNoLowerBound;
  Fixed hi = kNoUpperBound;

  bool bounded() const { return lo != kNoLowerBound || hi != kNoUpperBound; }
  // The range an integer must fall in: lo rounded up, hi down, to whole units.
  NumberRange whole() const;
  // Holds some value (some integer when `integer`).
  bool empty(bool integer) const;
};

// The number being written, digit by digit. Its syntax is the caller's
// (JsonMachine checks JSON's number grammar); this tracks the value.
class DecimalPrefix {
 public:
  void begin() { *this = DecimalPrefix(); }
  void negate() { negative_ = true; }
  // A digit of the integer part, or after dot(), of the fraction (false past
  // kMaxFraction fraction digits).
  bool digit(uint8_t d);
  void dot() { dot_ = true; }

  // Some number that begins with these bytes lies in `range` (an integer,
  // with no fraction, when `integer`). Before any digit: after '-', or
  // nothing at all, any magnitude may still come.
  bool can_reach(const NumberRange& range, bool integer) const;
  // The number as written lies in `range` (it has at least one digit, and
  // a digit after any dot).
  bool within(const NumberRange& range) const;
  // Bytes that tell prefixes apart: equal keys reach the same numbers.
  void append_key(std::string* out) const;

 private:
  // The magnitudes reachable from here, in the range [lo, hi] of magnitudes.
  bool magnitude_can_reach(Fixed lo, Fixed hi, bool integer) const;

  Fixed magnitude() const { return Fixed{whole_} * kScale + fraction_; }

  // Held in 16 bytes, 8-aligned: JsonMachine copies this with every trie step.
  uint64_t whole_ = 0;       // the integer part so far, saturating at kHugeWhole
  uint32_t fraction_ = 0;    // the fraction so far, in units of 10^-9
  uint8_t int_digits_ = 0;   // integer digits written (saturating at 255)
  uint8_t frac_digits_ = 0;  // fraction digits written
  bool negative_ = false;
  bool dot_ = false;
};

}  // namespace reprox::engine
