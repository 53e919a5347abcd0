#include "engine/sampling/number_bounds.hpp"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace reprox::engine {
namespace {

constexpr Fixed kHundredth = kScale / 100;

// Feeds a number's bytes (JSON syntax, no exponent) into a prefix.
DecimalPrefix prefix_of(const std::string& text) {
  DecimalPrefix p;
  for (const char c : text) {
    if (c == '-') p.negate();
    else if (c == '.') p.dot();
    else EXPECT_TRUE(p.digit(static_cast<uint8_t>(c - '0'))) << text;
  }
  return p;
}

NumberRange range(Fixed lo, Fixed hi) { return NumberRange{lo, hi}; }

// The text of v hundredths, canonical, and with up to `extra` more fraction zeros.
std::vector<std::string> spellings(long v, bool integer) {
  const bool negative = v < 0;
  const long a = negative ? -v : v;
  std::string whole = (negative ? "-" : "") + std::to_string(a / 100);
  if (integer) return {whole};
  std::string frac = std::to_string(100 + a % 100).substr(1);  // two digits
  std::vector<std::string> out;
  if (a % 100 == 0) out.push_back(whole);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  for (std::string f = frac; f.size() <= 3; f += '0')
    if (!f.empty()) out.push_back(whole + "." + f);
  return out;
}

// Every prefix, up to 7 bytes, of every spelling of a value in [lo, hi]
// (hundredths), over the grid [-1000, 1000]: the oracle for can_reach.
std::unordered_set<std::string> reachable_prefixes(long lo, long hi, bool integer) {
  std::unordered_set<std::string> out;
  const long step = integer ? 100 : 1;
  for (long v = std::max(lo, -100000L); v <= std::min(hi, 100000L); ++v) {
    if (v % step != 0) continue;
    for (std::string s : spellings(v, integer)) {
      for (size_t n = 1; n <= std::min<size_t>(s.size(), 7); ++n) out.insert(s.substr(0, n));
      if (v != 0) continue;
      s = "-" + s;  // zero may be written -0
      for (size_t n = 1; n <= std::min<size_t>(s.size(), 7); ++n) out.insert(s.substr(0, n));
    }
  }
  return out;
}

// Every syntactically valid prefix with at most two integer and two
// fraction digits (and "-"), no exponent.
std::vector<std::string> test_prefixes(bool integer) {
  std::vector<std::string> wholes;
  for (int i = 0; i < 100; ++i) wholes.push_back(std::to_string(i));
  std::vector<std::string> out = {"-"};
  for (const std::string sign : {"", "-"})
    for (const auto& w : wholes) {
      out.push_back(sign + w);
      if (integer) continue;
      out.push_back(sign + w + ".");
      for (int f = 0; f < 10; ++f) {
        out.push_back(sign + w + "." + std::to_string(f));
        for (int g = 0; g < 10; ++g) out.push_back(sign + w + "." + std::to_string(f) + std::to_string(g));
      }
    }
  return out;
}

TEST(NumberBounds, CanReachAgreesWithEveryValueOnAGrid) {
  // Bounds in hundredths; LONG_MIN / LONG_MAX stand for none.
  const long kNone = 1L << 40;
  const std::vector<std::pair<long, long>> bounds = {
      {0, kNone},       {-kNone, 0},      {150, 15000},    {-15000, -150}, {50, 50},
      {-5, 5},          {1, 99},          {5550, kNone},  {-kNone, -1},   {-12345, 6789},
      {250, 260},       {-kNone, 15000},  {0, 0},          {-1, 1},        {10000, 10000},
  };
  for (const bool integer : {false, true}) {
    const auto prefixes = test_prefixes(integer);
    for (const auto& [lo, hi] : bounds) {
      const NumberRange r = range(lo == -kNone ? kNoLowerBound : lo * kHundredth,
                                  hi == kNone ? kNoUpperBound : hi * kHundredth);
      if (r.empty(integer)) continue;
      const auto oracle = reachable_prefixes(lo, hi, integer);
      for (const auto& p : prefixes)
        EXPECT_EQ(prefix_of(p).can_reach(r, integer), oracle.count(p) == 1)
            << p << " in [" << lo << ", " << hi << "] hundredths, integer " << integer;
    }
  }
}

TEST(NumberBounds, WithinComparesTheValueWritten) {
  const NumberRange r = range(-150 * kHundredth, 275 * kHundredth);  // [-1.5, 2.75]
  for (const std::string in : {"-1.5", "-1.50", "-0", "0", "2.75", "2.750000000", "1"})
    EXPECT_TRUE(prefix_of(in).within(r)) << in;
  for (const std::string out : {"-1.51", "2.751", "3", "-2", "2.750000001"})
    EXPECT_FALSE(prefix_of(out).within(r)) << out;
}

TEST(NumberBounds, FractionDigitsStopAtTheScale) {
  DecimalPrefix p = prefix_of("0.");
  for (int i = 0; i < kMaxFraction; ++i) EXPECT_TRUE(p.digit(1));
  EXPECT_FALSE(p.digit(1));
}

TEST(NumberBounds, DigitsSaturateAboveEveryBound) {
  const NumberRange from_zero = range(0, kNoUpperBound);
  const NumberRange to_max = range(0, kMaxBound);
  DecimalPrefix p = prefix_of("9");
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(p.digit(9));
    EXPECT_TRUE(p.can_reach(from_zero, true));
  }
  EXPECT_TRUE(p.within(from_zero));
  EXPECT_FALSE(p.can_reach(to_max, true));
  EXPECT_FALSE(p.within(to_max));
  // 10^18 itself is the largest bound, and reachable.
  EXPECT_TRUE(prefix_of("1000000000000000000").within(to_max));
  EXPECT_FALSE(prefix_of("1000000000000000001").can_reach(to_max, true));
}

TEST(NumberBounds, IntegerRangesRoundInward) {
  const NumberRange r = range(50 * kHundredth, 250 * kHundredth);  // [0.5, 2.5]: integers 1 and 2
  EXPECT_FALSE(prefix_of("0").can_reach(r, true));
  EXPECT_TRUE(prefix_of("1").can_reach(r, true));
  EXPECT_FALSE(prefix_of("3").can_reach(r, true));
  EXPECT_TRUE(prefix_of("0").can_reach(r, false));  // 0.5 as a number
  EXPECT_TRUE(range(10 * kHundredth, 90 * kHundredth).empty(true));
  EXPECT_FALSE(range(10 * kHundredth, 90 * kHundredth).empty(false));
}

TEST(NumberBounds, KeysTellValuesApart) {
  auto key = [](const std::string& text) {
    std::string k;
    prefix_of(text).append_key(&k);
    return k;
  };
  EXPECT_NE(key("1"), key("2"));
  EXPECT_NE(key("1"), key("1."));
  EXPECT_NE(key("1.0"), key("1."));
  EXPECT_NE(key("-1"), key("1"));
  EXPECT_NE(key("-"), key("-0"));
  EXPECT_EQ(key("1.5"), key("1.5"));
}

}  // namespace
}  // namespace reprox::engine
