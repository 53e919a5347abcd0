// Human units: sizes ("16GiB", "1.5GB") and durations ("90s", "1h30m")
// parse to exact numbers; malformed, negative, empty, unknown-unit and
// overflowing values are errors that quote the text.
#include "conf/units.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace reprox {
namespace {

// The message of the error `parse` throws, or "" when it throws none.
template <typename Parse>
std::string error_of(const Parse& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Units, Sizes) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"0", 0},
      {"1024", 1024},
      {"7B", 7},
      {"1KB", 1000},
      {"512MB", 512'000'000},
      {"1.5GB", 1'500'000'000},
      {"2TB", 2'000'000'000'000},
      {"64KiB", 64 * 1024},
      {"1.5KiB", 1536},
      {"256MiB", 256ull << 20},
      {"16GiB", 16ull << 30},
      {"1TiB", 1ull << 40},
      {"16gib", 16ull << 30},
      {"16 GiB", 16ull << 30},
      {" 3 kb ", 3000},
      {"0.5MiB", 512 * 1024},
      {"18446744073709551615", 18446744073709551615ull},
      {"16777215TiB", 16777215ull << 40},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_size(c.text), c.bytes) << c.text;
}

TEST(Units, BadSizes) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"16QB", "bad size '16QB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"},
      {"", "bad size '': empty"},
      {"   ", "bad size '   ': empty"},
      {"-1", "bad size '-1': negative"},
      {"-2GiB", "bad size '-2GiB': negative"},
      {"GiB", "bad size 'GiB': not a number"},
      {"1.2.3MB", "bad size '1.2.3MB': not a number"},
      {"1.1B", "bad size '1.1B': not a whole number of bytes"},
      {"18446744073709551616", "bad size '18446744073709551616': too large"},
      {"16777216TiB", "bad size '16777216TiB': too large"},
      {"99999999999999999999999999", "bad size '99999999999999999999999999': too large"},
      {"1GiB2", "bad size '1GiB2' (units:"},
      {"1 G iB", "bad size '1 G iB' (units:"},
  };
  for (const Case& c : cases) {
    std::string error = error_of([&] { parse_size(c.text); });
    EXPECT_EQ(error.rfind(c.message, 0), 0u) << c.text << " -> " << error;
  }
}

TEST(Units, Durations) {
  struct Case {
    const char* text;
    TimeUnit unit;
    int64_t value;
  };
  constexpr TimeUnit s = TimeUnit::seconds, ms = TimeUnit::milliseconds;
  const Case cases[] = {
      {"90", s, 90},          {"90", ms, 90},      {"90s", s, 90},       {"90s", ms, 90'000},
      {"250ms", ms, 250},     {"2000ms", s, 2},    {"15m", s, 900},      {"24h", s, 86'400},
      {"7d", s, 604'800},     {"1h30m", s, 5'400}, {"1h 30m", s, 5'400}, {"1d2h3m4s", s, 93'784},
      {"1s500ms", ms, 1'500}, {"1.5h", s, 5'400},  {"0.5s", ms, 500},    {"24H", s, 86'400},
      {"30 s", ms, 30'000},   {"0", s, 0},         {"0s", ms, 0},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_duration(c.text, c.unit), c.value) << c.text;
}

TEST(Units, BadDurations) {
  struct Case {
    const char* text;
    TimeUnit unit;
    const char* message;
  };
  constexpr TimeUnit s = TimeUnit::seconds, ms = TimeUnit::milliseconds;
  const Case cases[] = {
      {"5x", s, "bad duration '5x' (units: ms, s, m, h, d)"},
      {"1w", s, "bad duration '1w' (units: ms, s, m, h, d)"},
      {"1h30", s, "bad duration '1h30' (units: ms, s, m, h, d)"},
      {"", s, "bad duration '': empty"},
      {"-5s", s, "bad duration '-5s': negative"},
      {"h", s, "bad duration 'h': not a number"},
      {"1500ms", s, "bad duration '1500ms': not a whole number of seconds"},
      {"1.5", s, "bad duration '1.5': not a whole number of seconds"},
      {"0.5ms", ms, "bad duration '0.5ms': not a whole number of milliseconds"},
      {"9223372036854775807s", ms, "bad duration '9223372036854775807s': too large"},
      {"999999999999d", ms, "bad duration '999999999999d': too large"},
  };
  for (const Case& c : cases) {
    std::string error = error_of([&] { parse_duration(c.text, c.unit); });
    EXPECT_EQ(error, c.message) << c.text;
  }
  EXPECT_EQ(parse_duration("9223372036854775807", ms), INT64_MAX);
}

}  // namespace
}  // namespace reprox
